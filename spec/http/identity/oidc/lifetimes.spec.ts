import { expect } from 'chai';
import { sha256Hex } from '../../../../domain/sha256.js';
import { useConfidentialApp } from './rp-support.js';

const REDIRECT = 'https://app.spec.example/callback';
const DAY = 24 * 60 * 60;

/**
 * Runs `work` while oidc-provider's clock (`Date.now`; it has no other) reads
 * `seconds` later than it is. The service clock, PostgreSQL and undici's timers
 * do not follow `Date.now`, so only the provider's expiry checks see the jump.
 */
async function later<T>(seconds: number, work: () => Promise<T>): Promise<T> {
  const real = Date.now;
  Date.now = () => real() + seconds * 1000;
  try {
    return await work();
  } finally {
    Date.now = real;
  }
}

/**
 * The lifetimes of the contract's Limits table, as the provider stores and
 * enforces them: code 120 s, access token 1 h, refresh token 120 days from its
 * last use (sliding), the chain capped a year after its first token.
 */
describe('Identity OIDC lifetimes: code, access token, refresh token', function () {
  this.timeout(120_000);
  const rp = useConfidentialApp(REDIRECT);

  /** The stored row of a model instance: its expiry and the payload's times (epoch seconds). */
  async function stored(model: string, id: string): Promise<{ expires: number; iat: number; exp: number; iiat?: number }> {
    const { rows } = await rp.f.sys.pool.query(`SELECT expires_at, payload FROM oidc_models WHERE model = $1 AND key = $2`, [model, sha256Hex(id)]);
    expect(rows, `${model} stored`).to.have.length(1);
    const { expires_at, payload } = rows[0];
    return { expires: (expires_at as Date).getTime() / 1000, iat: payload.iat, exp: payload.exp, ...(payload.iiat ? { iiat: payload.iiat } : {}) };
  }

  const refresh = (refreshToken: string) => rp.token({ grant_type: 'refresh_token', refresh_token: refreshToken });

  describe('authorization code: 120 s', () => {
    it('is stored to expire 120 s after it was issued', async () => {
      const form = await rp.codeForm();
      const code = await stored('AuthorizationCode', form.code);
      expect(code.exp - code.iat).to.equal(120);
      expect(code.expires).to.equal(code.exp);
    });

    // Measured from the code's stored issue time, not from now: under load the
    // real seconds between issuing and redeeming would add to the jump.
    const sinceIssue = async <T>(code: string, seconds: number, work: () => Promise<T>) => {
      const { iat } = await stored('AuthorizationCode', code);
      return later(iat + seconds - Date.now() / 1000, work);
    };

    it('is redeemed 119 s after it was issued', async () => {
      const form = await rp.codeForm();
      const res = await sinceIssue(form.code, 119, () => rp.token(form));
      expect(res.status).to.equal(200);
    });

    it('is refused 121 s after it was issued, and stays unconsumed', async () => {
      const form = await rp.codeForm();
      const res = await sinceIssue(form.code, 121, () => rp.token(form));
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('invalid_grant');
      const consumed = await rp.f.sys.pool.query(`SELECT count(*)::int AS n FROM events WHERE stream_id = $1 AND type = 'OidcModelConsumed'`, [
        `oidc-AuthorizationCode-${sha256Hex(form.code)}`,
      ]);
      expect(consumed.rows[0].n).to.equal(0);
    });
  });

  describe('access token: 1 h', () => {
    it("answers at UserInfo until its hour (and the provider's 15 s clock tolerance) is over", async () => {
      const tokens = (await rp.token(await rp.codeForm())).body;
      expect(Number(tokens.expires_in)).to.equal(3600);
      const stamp = await stored('AccessToken', tokens.access_token);
      expect(stamp.exp - stamp.iat).to.equal(3600);
      const userinfo = () => fetch(`${rp.f.url}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect((await later(3590, userinfo)).status).to.equal(200);
      const expired = await later(3600 + 16, userinfo);
      expect(expired.status).to.equal(401);
      expect(expired.headers.get('www-authenticate')).to.match(/invalid_token/);
    });
  });

  describe('refresh token: 120 days sliding, capped at a year', () => {
    it('is stored to expire 120 days after it was issued', async () => {
      const tokens = (await rp.token(await rp.codeForm())).body;
      const rt = await stored('RefreshToken', tokens.refresh_token);
      expect(rt.exp - rt.iat).to.equal(120 * DAY);
      expect(rt.iiat).to.equal(rt.iat);
    });

    it('expires when it is not used for 120 days', async () => {
      const tokens = (await rp.token(await rp.codeForm())).body;
      const res = await later(120 * DAY + 5, () => refresh(tokens.refresh_token));
      expect(res.body.error).to.equal('invalid_grant');
    });

    it('gets 120 days again at each use, until the chain reaches its year', async () => {
      const first = (await rp.token(await rp.codeForm())).body;
      const start = (await stored('RefreshToken', first.refresh_token)).iat;
      let current = first.refresh_token;
      for (const day of [119, 238, 357]) {
        const res = await later(day * DAY, () => refresh(current));
        expect(res.status, `refresh on day ${day}`).to.equal(200);
        expect(res.body.refresh_token).not.to.equal(current);
        current = res.body.refresh_token;
        const rt = await stored('RefreshToken', current);
        expect(rt.iiat, 'the chain keeps its first issue time').to.equal(start);
        // Sliding: 120 days from this use; the cap cuts the last one to the year's end.
        expect(rt.exp).to.equal(Math.min(rt.iat + 120 * DAY, start + 365 * DAY));
      }
      expect((await stored('RefreshToken', current)).exp, 'capped').to.equal(start + 365 * DAY);
      const beyond = await later(365 * DAY + 5, () => refresh(current));
      expect(beyond.body.error).to.equal('invalid_grant');
    });
  });
});
