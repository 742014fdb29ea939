/**
 * Typed domain errors. One HTTP middleware maps each kind to the contract's status;
 * the message is the contract's `detail` text and is shown to the client as is.
 */
export abstract class DomainError extends Error {
  abstract readonly kind:
    | 'NotFound'
    | 'Conflict'
    | 'IllegalState'
    | 'Validation'
    | 'BadReference'
    | 'BadRequest'
    | 'Forbidden'
    | 'Unauthorized'
    | 'Gone'
    | 'TooManyRequests'
    | 'Unavailable';
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The resource on the path does not exist (404). */
export class NotFound extends DomainError {
  readonly kind = 'NotFound' as const;
}

/** A uniqueness or semantic conflict (409). */
export class Conflict extends DomainError {
  readonly kind = 'Conflict' as const;
}

/** The command is not allowed in the aggregate's current state (409). */
export class IllegalState extends DomainError {
  readonly kind = 'IllegalState' as const;
}

/** Where a bad value is (`['body', 'link_local']`), what is wrong, which rule. */
export interface FieldError {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** A value breaks a rule of the contract (422); `errors` lists the offending fields. */
export class Validation extends DomainError {
  readonly kind = 'Validation' as const;
  constructor(
    message: string,
    readonly errors: readonly FieldError[] = [],
  ) {
    super(message);
  }
}

/** The request names another resource that does not exist (400). */
export class BadReference extends DomainError {
  readonly kind = 'BadReference' as const;
}

/** The request cannot be carried out as sent: a proof that does not verify, a session without what the action needs (400). */
export class BadRequest extends DomainError {
  readonly kind = 'BadRequest' as const;
}

export class Forbidden extends DomainError {
  readonly kind = 'Forbidden' as const;
}

export class Unauthorized extends DomainError {
  readonly kind = 'Unauthorized' as const;
}

export class Gone extends DomainError {
  readonly kind = 'Gone' as const;
}

export class TooManyRequests extends DomainError {
  readonly kind = 'TooManyRequests' as const;
}

export class Unavailable extends DomainError {
  readonly kind = 'Unavailable' as const;
}
