import type { Response } from 'express';
import { DomainError } from '../../../domain/errors.js';
import { HttpError } from '../../shared/errors.js';

/** Runs a handler and, when it fails with a contract error, puts its detail in the audit entry. */
export async function auditOutcome(res: Response, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    if (err instanceof HttpError) res.locals.auditDetail = err.detail;
    else if (err instanceof DomainError) res.locals.auditDetail = err.message;
    throw err;
  }
}
