import { Ajv, type ErrorObject } from 'ajv';
import { Type } from '@sinclair/typebox';
import type { FieldError } from '../errors.js';
import { ADDRESS_FORMATS } from './ip.js';

/**
 * Schema building blocks for addresses and interfaces, shared by the node's
 * fields (`domain/node/base-template.ts`), the DNS part of the desired state
 * (`domain/dns/state-schema.ts`) and the desired-state document
 * (`domain/desired-state/schema.ts`), which sits on top of both.
 */

/** An address string of one of the `ADDRESS_FORMATS` (`addressAjv()` registers them). */
export const Fmt = (format: keyof typeof ADDRESS_FORMATS) => Type.String({ format, maxLength: 64 });

/** A Linux interface name: at most 15 characters. */
export const IfName = Type.String({ minLength: 1, maxLength: 15, pattern: '^[A-Za-z0-9_.-]+$' });

/** An ajv instance that knows the address formats and fills defaults. */
export function addressAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: true });
  for (const [name, check] of Object.entries(ADDRESS_FORMATS)) ajv.addFormat(name, check);
  return ajv;
}

/** ajv errors as field errors: `loc` starts with `root`, then the path into the document. */
export function toFieldErrors(root: readonly (string | number)[], errors: ErrorObject[] | null | undefined): FieldError[] {
  return (errors ?? []).map((e) => {
    const loc: (string | number)[] = [
      ...root,
      ...e.instancePath
        .split('/')
        .filter(Boolean)
        .map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~'))),
    ];
    if (e.keyword === 'required') loc.push((e.params as { missingProperty: string }).missingProperty);
    if (e.keyword === 'additionalProperties') loc.push((e.params as { additionalProperty: string }).additionalProperty);
    return { loc, msg: e.keyword === 'additionalProperties' ? 'unknown field' : (e.message ?? 'invalid value'), type: e.keyword };
  });
}
