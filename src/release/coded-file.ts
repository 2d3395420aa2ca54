// A file with its compressed codings inside: how a `node` release keeps a page or an answer and its
// brotli and gzip bytes in one file, where a `static` one writes `<file>.br` and `<file>.gz` beside
// it for nginx (docs/deploying.md#compression). One inode a file instead of three: creating files
// was most of a build's system time on this machine's disk, and at 1,000,000 profiles a release
// held 6 million of them (docs/scale.md, "Files on disk"). The build writes it
// (src/build/files/compress.ts), the Node server reads it (src/server/disk-files.ts).
//
//   bytes 0-3    "\0cz1": no text file the build writes starts with a NUL
//   bytes 4-7    length of the file itself (identity), little-endian
//   bytes 8-11   length of its brotli bytes, 0 when there are none (saved too little)
//   bytes 12-15  length of its gzip bytes, likewise
//   then the identity, brotli and gzip bytes, in that order.
//
// A file worth no coding (too small, or saving under 10%) is written as it is, without a head.
import { BROTLI, ENCODINGS, GZIP, type Encoding } from '../http/headers.ts';

const MAGIC = [0x00, 0x63, 0x7a, 0x31] as const; // "\0cz1"
export const CODED_HEAD_BYTES = 16;

/** The file holding `identity` and its codings (by sibling suffix, as compress.ts makes them), or `identity` itself when there is none. */
export function packCodings(identity: Uint8Array, codings: ReadonlyMap<string, Uint8Array>): Uint8Array {
  const br = codings.get(BROTLI.suffix);
  const gz = codings.get(GZIP.suffix);
  if (!br && !gz) return identity;
  const out = Buffer.allocUnsafe(CODED_HEAD_BYTES + identity.byteLength + (br?.byteLength ?? 0) + (gz?.byteLength ?? 0));
  out.set(MAGIC, 0);
  out.writeUInt32LE(identity.byteLength, 4);
  out.writeUInt32LE(br?.byteLength ?? 0, 8);
  out.writeUInt32LE(gz?.byteLength ?? 0, 12);
  let at = CODED_HEAD_BYTES;
  for (const part of [identity, br, gz]) {
    if (!part) continue;
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/** The lengths of the identity, brotli and gzip parts in the head of `bytes`, or undefined when they are no packed file (no head, or one that does not add up to its length). */
function partLengths(bytes: Uint8Array): [number, number, number] | undefined {
  if (bytes.byteLength < CODED_HEAD_BYTES || bytes[0] !== MAGIC[0] || bytes[1] !== MAGIC[1] || bytes[2] !== MAGIC[2] || bytes[3] !== MAGIC[3]) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, CODED_HEAD_BYTES);
  const lengths: [number, number, number] = [view.getUint32(4, true), view.getUint32(8, true), view.getUint32(12, true)];
  return CODED_HEAD_BYTES + lengths[0] + lengths[1] + lengths[2] === bytes.byteLength ? lengths : undefined;
}

/** Whether `bytes` are a file with its codings inside. */
export const isPacked = (bytes: Uint8Array): boolean => partLengths(bytes) !== undefined;

/**
 * One coding of a file as stored (`undefined`: the file itself), as a view of `bytes`: for a packed
 * file its part, undefined when it has none of that coding; for any other file the bytes
 * themselves, and no coding.
 */
export function partOf(bytes: Uint8Array, coding: Encoding | undefined): Uint8Array | undefined {
  const lengths = partLengths(bytes);
  if (!lengths) return coding ? undefined : bytes;
  const k = coding ? 1 + ENCODINGS.indexOf(coding) : 0;
  if (!lengths[k]) return coding ? undefined : bytes.subarray(CODED_HEAD_BYTES, CODED_HEAD_BYTES);
  let at = CODED_HEAD_BYTES;
  for (let i = 0; i < k; i++) at += lengths[i]!;
  return bytes.subarray(at, at + lengths[k]!);
}

/** The file itself, from what is stored (packed or not). */
export const identityOf = (bytes: Uint8Array): Uint8Array => partOf(bytes, undefined)!;
