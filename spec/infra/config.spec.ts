import { expect } from 'chai';
import { ConfigError, describeConfig, loadConfig } from '../../infra/config.js';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return err as ConfigError;
  }
  expect.fail(`loadConfig accepted ${JSON.stringify(env)}`);
}

const SECRET = 'a-long-enough-secret-value';

describe('Configuration', () => {
  describe('loadConfig', () => {
    it('gives the documented defaults for an empty environment', () => {
      const config = loadConfig({});
      expect(config).to.include({
        databaseUrl: undefined,
        eventStoreUrl: undefined,
        dataDir: '.data',
        bindHost: '127.0.0.1',
        controlPort: 8080,
        identityPort: 8081,
        registryPort: 8082,
        sitePort: 8083,
        adminToken: undefined,
        captchaKind: 'pow',
        identityIssuer: 'http://127.0.0.1:8081',
        controlUrl: 'http://127.0.0.1:8080',
        logLevel: 'info',
        projectionPollMs: 1000,
      });
    });

    it('treats an empty variable as unset', () => {
      expect(loadConfig({ CONTROL_PORT: '', ADMIN_TOKEN: '' })).to.include({ controlPort: 8080, adminToken: undefined });
    });

    it('parses valid values', () => {
      const config = loadConfig({
        DATABASE_URL: 'postgresql://u:p@db.example:5433/dn42',
        EVENTSTORE_URL: 'kurrentdb://admin:changeit@127.0.0.1:2113?tls=false',
        CONTROL_PORT: '0',
        IDENTITY_PORT: ' 9001 ',
        SITE_PORT: '65535',
        ADMIN_TOKEN: SECRET,
        CAPTCHA_KIND: 'none',
        PROJECTION_POLL_MS: '250',
        LOG_LEVEL: 'silent',
      });
      expect(config).to.include({
        databaseUrl: 'postgresql://u:p@db.example:5433/dn42',
        eventStoreUrl: 'kurrentdb://admin:changeit@127.0.0.1:2113?tls=false',
        controlPort: 0,
        identityPort: 9001,
        sitePort: 65535,
        adminToken: SECRET,
        captchaKind: 'none',
        projectionPollMs: 250,
        logLevel: 'silent',
      });
    });

    const bad: [string, string][] = [
      ['CONTROL_PORT', 'abc'],
      ['CONTROL_PORT', '70000'],
      ['CONTROL_PORT', '-1'],
      ['CONTROL_PORT', '80.5'],
      ['IDENTITY_PORT', '65536'],
      ['DATABASE_URL', 'mysql://x'],
      ['DATABASE_URL', 'not a url'],
      ['EVENTSTORE_URL', 'http://127.0.0.1:2113'],
      ['CAPTCHA_KIND', 'foo'],
      ['ADMIN_TOKEN', 'short'],
      ['IDENTITY_ADMIN_TOKEN', '123456789012345'],
      ['SMTP_URL', 'http://mail.example'],
      ['IDENTITY_ISSUER', 'ftp://id.example'],
      ['LOG_LEVEL', 'verbose'],
      ['PROJECTION_POLL_MS', '0'],
    ];
    for (const [variable, value] of bad) {
      it(`refuses ${variable}=${value} with an error naming ${variable}`, () => {
        const err = configError({ [variable]: value });
        expect(err.variable).to.equal(variable);
        expect(err.message).to.match(new RegExp(`^${variable}: `));
      });
    }

    it('names the bad variable even when other variables are valid', () => {
      const err = configError({ CONTROL_PORT: '8080', ADMIN_TOKEN: SECRET, SITE_PORT: 'eighty' });
      expect(err.variable).to.equal('SITE_PORT');
    });

    it('refuses a notification lease no longer than the request deadline, and a bad CIDR in NOTIFY_WEBHOOK_ALLOW', () => {
      const lease = configError({ NOTIFY_LEASE_MS: '5000', NOTIFY_TIMEOUT_MS: '5000' });
      expect(lease.message).to.equal('NOTIFY_LEASE_MS: must be longer than NOTIFY_TIMEOUT_MS (5000 ms)');
      expect(configError({ NOTIFY_WEBHOOK_ALLOW: '127.0.0.0/33' }).variable).to.equal('NOTIFY_WEBHOOK_ALLOW');
      expect(loadConfig({ NOTIFY_WEBHOOK_ALLOW: '127.0.0.1, fd00::/8' }).notifyWebhookAllow).to.deep.equal(['127.0.0.1/32', 'fd00::/8']);
    });
  });

  describe('describeConfig', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://dn42:db-password-123@db.example:5432/dn42',
      EVENTSTORE_URL: 'esdb://admin:es-password-456@127.0.0.1:2113?tls=false',
      ADMIN_TOKEN: SECRET,
      IDENTITY_ADMIN_TOKEN: `${SECRET}-identity`,
      REGISTRY_SERVICE_TOKEN: `${SECRET}-registry`,
      BOOTSTRAP_ENROLLMENT_TOKEN: `${SECRET}-enroll`,
      SMTP_URL: 'smtp://mailer:smtp-password-789@mail.example:587',
      CONTROL_PORT: '9000',
    });
    const lines = describeConfig(config);
    const text = lines.join('\n');
    const line = (variable: string) => lines.find((l) => l.startsWith(`${variable}=`));

    it('prints one VARIABLE=value line per setting', () => {
      expect(line('CONTROL_PORT')).to.equal('CONTROL_PORT=9000');
      expect(line('CAPTCHA_KIND')).to.equal('CAPTCHA_KIND=pow');
      expect(line('REGISTRY_URL')).to.equal('REGISTRY_URL=(unset)');
      expect(new Set(lines.map((l) => l.split('=')[0])).size).to.equal(lines.length);
    });

    it('masks secrets entirely', () => {
      for (const variable of ['ADMIN_TOKEN', 'IDENTITY_ADMIN_TOKEN', 'REGISTRY_SERVICE_TOKEN', 'BOOTSTRAP_ENROLLMENT_TOKEN', 'SMTP_URL']) {
        expect(line(variable), variable).to.equal(`${variable}=********`);
      }
      expect(text).to.not.include(SECRET);
      expect(text).to.not.include('smtp-password-789');
    });

    it('masks the password of URLs and keeps the rest readable', () => {
      expect(line('DATABASE_URL')).to.equal('DATABASE_URL=postgres://dn42:****@db.example:5432/dn42');
      expect(line('EVENTSTORE_URL')).to.include('admin:****@127.0.0.1:2113');
      expect(text).to.not.include('db-password-123');
      expect(text).to.not.include('es-password-456');
    });

    it('masks a PostgreSQL password given as a query parameter', () => {
      const lines = describeConfig(loadConfig({ DATABASE_URL: 'postgres://dn42@db.example/dn42?sslmode=require&password=query-secret-1' }));
      const db = lines.find((l) => l.startsWith('DATABASE_URL='))!;
      expect(db).to.not.include('query-secret-1');
      expect(db).to.include('db.example');
    });
  });
});
