import { expect } from 'chai';
import { buildSnapshot, type RegistryFile } from '../../../domain/registry/snapshot.js';
import { rpsl } from '../../support/registry.js';

describe('Registry snapshot', () => {
  const file = (path: string, text: string): RegistryFile => ({ path, text });

  it('counts objects per class and skips malformed ones without stopping', () => {
    const snapshot = buildSnapshot([
      file(
        'data/aut-num/AS1',
        rpsl([
          ['aut-num', 'AS1'],
          ['as-name', 'ONE'],
          ['mnt-by', 'X-MNT'],
        ]),
      ),
      file('data/aut-num/AS2', 'garbage without a key\n'),
      file('data/aut-num/AS3', rpsl([['mntner', 'WRONG-CLASS']])),
      file('data/aut-num/ASX', rpsl([['aut-num', 'ASX']])),
      file('data/aut-num/as1', rpsl([['aut-num', 'as1']])),
      file(
        'data/route/10.0.0.0_8',
        rpsl([
          ['route', '10.0.0.0/33'],
          ['origin', 'AS1'],
        ]),
      ),
      file(
        'data/route/172.20.0.0_24',
        rpsl([
          ['route', '172.20.0.0/24'],
          ['origin', 'AS1'],
          ['origin', 'AS2'],
        ]),
      ),
      file(
        'data/route6/fd42::_48',
        rpsl([
          ['route6', 'FD42:0::/48'],
          ['origin', 'AS1'],
        ]),
      ),
      file('data/schema/X-SCHEMA', rpsl([['schema', 'X-SCHEMA']])),
      file(
        'data/dns/x.dn42',
        rpsl([
          ['domain', 'x.dn42'],
          ['nserver', 'ns1.x.dn42'],
        ]),
      ),
      file('data/person/NOHDL', rpsl([['person', 'Nobody']])),
    ]);
    expect(snapshot.counts).to.deep.equal({ 'aut-num': 1, route: 1, route6: 1, schema: 1, dns: 1, malformed: 6 });
    expect(snapshot.malformed.map((m) => m.path)).to.deep.equal([
      'data/aut-num/AS2',
      'data/aut-num/AS3',
      'data/aut-num/ASX',
      'data/aut-num/as1',
      'data/route/10.0.0.0_8',
      'data/person/NOHDL',
    ]);
    expect(snapshot.routes).to.deep.equal([
      { prefix: '172.20.0.0/24', family: 4, origins: [1, 2], maxLength: null },
      { prefix: 'fd42::/48', family: 6, origins: [1], maxLength: null },
    ]);
  });

  it('keeps all e-mail addresses of a person, trimmed, and none of a role', () => {
    const snapshot = buildSnapshot([
      file(
        'data/person/P-DN42',
        rpsl([
          ['person', 'P'],
          ['e-mail', 'p@example.net   '],
          ['e-mail', 'p2@example.net'],
          ['e-mail', 'not an address'],
          ['nic-hdl', 'p-dn42'],
        ]),
      ),
      file(
        'data/role/R-DN42',
        rpsl([
          ['role', 'R'],
          ['e-mail', 'r@example.net'],
          ['nic-hdl', 'R-DN42'],
        ]),
      ),
    ]);
    expect(snapshot.contacts).to.deep.equal([
      { handle: 'P-DN42', kind: 'person', name: 'P', emails: ['p@example.net', 'p2@example.net'] },
      { handle: 'R-DN42', kind: 'role', name: 'R', emails: [] },
    ]);
  });

  it('reads a key-cert armor from its certif lines and its spaced fingerprint', () => {
    const snapshot = buildSnapshot([
      file(
        'data/key-cert/PGPKEY-0000AAAA',
        rpsl([
          ['key-cert', 'PGPKEY-0000AAAA'],
          ['fingerpr', '1111 2222 3333 4444 5555  6666 7777 8888 0000 aaaa'],
          ['certif', '-----BEGIN PGP PUBLIC KEY BLOCK-----'],
          ['certif', ''],
          ['certif', 'abc'],
          ['certif', '-----END PGP PUBLIC KEY BLOCK-----'],
        ]),
      ),
    ]);
    expect(snapshot.keyCerts[0]).to.deep.include({
      name: 'PGPKEY-0000AAAA',
      fingerprint: '111122223333444455556666777788880000AAAA',
      armor: '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nabc\n-----END PGP PUBLIC KEY BLOCK-----',
    });
  });
});
