import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { deriveKey as nodeDeriveKey } from 'altcha-lib/algorithms/sha';
import { deriveKey } from '../../web/authorize/captcha.js';
import { sha256 } from '../../web/authorize/sha256.js';

describe('Authorization page: SHA-256 of the proof-of-work search', () => {
  it('equals node:crypto for every length around the block and padding boundaries', () => {
    for (let length = 0; length <= 200; length++) {
      const data = randomBytes(length);
      expect(Buffer.from(sha256(data)).toString('hex'), `length ${length}`).to.equal(createHash('sha256').update(data).digest('hex'));
    }
  });

  it('derives the keys the server derives (altcha-lib, node:crypto), for several costs and key lengths', async () => {
    for (const [cost, keyLength] of [
      [1, 32],
      [3, 32],
      [1, 16],
    ]) {
      const parameters = { algorithm: 'SHA-256', nonce: '00', salt: '00', cost, keyLength, keyPrefix: '00' };
      const salt = randomBytes(16);
      const password = randomBytes(20);
      const ours = await deriveKey(parameters, salt, password);
      const theirs = await nodeDeriveKey(parameters, salt, password);
      expect(Buffer.from(ours.derivedKey).toString('hex')).to.equal(Buffer.from(theirs.derivedKey).toString('hex'));
    }
  });
});
