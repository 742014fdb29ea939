import { expect } from 'chai';
import { first, handles, parseRpsl, values } from '../../../domain/registry/rpsl.js';
import { rpsl } from '../../support/registry.js';

function parsed(text: string) {
  const result = parseRpsl(text);
  if (!result.ok) expect.fail(`not parsed: ${result.reason}`);
  return result.object;
}

describe('RPSL parsing', () => {
  it('reads keys padded to column 21 and values that contain colons', () => {
    const object = parsed(
      rpsl([
        ['aut-num', 'AS4242420001'],
        ['remarks', 'see https://example.net:8443/x'],
      ]),
    );
    expect(object.type).to.equal('aut-num');
    expect(first(object, 'aut-num')).to.equal('AS4242420001');
    expect(first(object, 'remarks')).to.equal('see https://example.net:8443/x');
  });

  it('joins whitespace continuation lines and turns a lone + into an empty line', () => {
    const object = parsed(['descr:              first', '                    second', '+', '+ fourth', 'source:             DN42', ''].join('\n'));
    expect(values(object, 'descr')).to.deep.equal(['first\nsecond\n\nfourth']);
    expect(values(object, 'source')).to.deep.equal(['DN42']);
  });

  it('keeps repeated keys in order and lower-cases keys', () => {
    const object = parsed(
      rpsl([
        ['mntner', 'X-MNT'],
        ['AUTH', 'one'],
        ['auth', 'two'],
      ]),
    );
    expect(values(object, 'auth')).to.deep.equal(['one', 'two']);
  });

  it('splits handle lists on commas and spaces, upper-cases and deduplicates them', () => {
    const object = parsed(
      rpsl([
        ['aut-num', 'AS1'],
        ['mnt-by', 'a-mnt, B-MNT'],
        ['mnt-by', 'A-MNT'],
      ]),
    );
    expect(handles(object, 'mnt-by')).to.deep.equal(['A-MNT', 'B-MNT']);
  });

  it('accepts CRLF line ends', () => {
    expect(first(parsed('person:             X\r\nnic-hdl:            X-DN42\r\n'), 'nic-hdl')).to.equal('X-DN42');
  });

  for (const [name, text] of [
    ['a line that is neither key nor continuation', 'person: X\nthis is prose\n'],
    ['a continuation before any key', '   indented\nperson: X\n'],
    ['an empty file', '\n\n'],
    ['binary content', 'person: X\0\n'],
  ] as const) {
    it(`refuses ${name}`, () => {
      expect(parseRpsl(text).ok).to.equal(false);
    });
  }
});
