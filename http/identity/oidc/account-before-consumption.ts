import type Provider from 'oidc-provider';
import { accountOf, type AccountDeps } from './account.js';

/**
 * oidc-provider's code exchange marks the code used and only then looks its
 * account up; our account lookup asks the registry replica live, so a replica
 * outage at that moment would answer 503 with the code already spent, and the
 * application could not retry. On this provider's own AuthorizationCode class,
 * `consume` therefore resolves the account first: an outage fails the exchange
 * (503 `temporarily_unavailable`) with the code still unused, and the exchange
 * that goes on uses the very account resolved here (`accountOf` keeps it for
 * this code object), so no second lookup can fail after the code is spent.
 * An account that is gone (the maintainer no longer maintains the AS) does not
 * stop the consumption: the exchange is refused with `invalid_grant` right
 * after, and a code is single use whatever the outcome.
 * A replayed code never reaches `consume` (the provider sees it consumed first
 * and revokes the grant's tokens), so replay handling needs no registry.
 */
export function lookUpAccountBeforeConsumption(provider: Provider, deps: AccountDeps): void {
  const prototype = provider.AuthorizationCode.prototype;
  const consume = prototype.consume;
  Object.defineProperty(prototype, 'consume', {
    async value(this: InstanceType<Provider['AuthorizationCode']>): Promise<void> {
      if (this.accountId) await accountOf(deps, this.accountId, this);
      await consume.call(this);
    },
  });
}
