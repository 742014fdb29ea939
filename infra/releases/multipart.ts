import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { UPLOAD_LIMITS } from '../../domain/release/rules.js';
import { Validation } from '../../domain/errors.js';

export interface ReleaseUpload {
  version: string | undefined;
  files: { filename: string; content: Buffer }[];
}

/** The upload is beyond UPLOAD_LIMITS (the HTTP layer answers 413). */
export class UploadTooLarge extends Error {
  constructor() {
    super(
      `release upload too large: at most ${UPLOAD_LIMITS.files} files of ${UPLOAD_LIMITS.file_bytes} bytes each, ${UPLOAD_LIMITS.total_bytes} bytes in all`,
    );
    this.name = 'UploadTooLarge';
  }
}

const tooLarge = () => new UploadTooLarge();

const malformed = (why: string) => new Validation(`invalid upload: ${why}`, [{ loc: ['body'], msg: why, type: 'multipart' }]);

/**
 * Reads `multipart/form-data` with a `version` field and `files` parts into
 * memory, within UPLOAD_LIMITS (UploadTooLarge beyond). File names are kept exactly as sent
 * (`preservePath`), so that the allow-list sees, and refuses, any path.
 */
export function readReleaseUpload(req: IncomingMessage): Promise<ReleaseUpload> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        preservePath: true,
        limits: { fileSize: UPLOAD_LIMITS.file_bytes, files: UPLOAD_LIMITS.files, fields: 8, fieldSize: 1024, parts: UPLOAD_LIMITS.files + 8 },
      });
    } catch {
      reject(malformed('multipart/form-data expected'));
      return;
    }
    const upload: ReleaseUpload = { version: undefined, files: [] };
    let total = 0;
    let failed: Error | undefined;
    const fail = (err: Error) => {
      if (failed) return;
      failed = err;
      req.unpipe(parser);
      req.resume(); // drain the rest so that the answer can be read
      reject(err);
    };
    parser.on('field', (name, value) => {
      if (name === 'version') upload.version = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'files' && name !== 'files[]') {
        stream.resume();
        return fail(malformed(`unexpected file field ${JSON.stringify(name)}; files go in "files"`));
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (total > UPLOAD_LIMITS.total_bytes) fail(tooLarge());
        else chunks.push(chunk);
      });
      stream.on('limit', () => fail(tooLarge()));
      stream.on('close', () => {
        if (!failed) upload.files.push({ filename: info.filename ?? '', content: Buffer.concat(chunks) });
      });
    });
    parser.on('filesLimit', () => fail(tooLarge()));
    parser.on('partsLimit', () => fail(tooLarge()));
    parser.on('error', (err: Error) => fail(malformed(err.message)));
    parser.on('close', () => {
      if (!failed) resolve(upload);
    });
    req.pipe(parser);
  });
}
