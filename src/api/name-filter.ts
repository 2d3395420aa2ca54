// A Bloom filter of the user names that have an answer file: the build writes it (release-files.ts
// `lookupFiles`), the handler reads it once per release and answers a 404 for a name it excludes
// without reading the user file, which on disk is an lstat in a folder of 100,000 names and on
// Cloudflare a round trip to the asset server. A name it admits is read as before, so a false
// positive costs that read and nothing else: the answer never depends on the filter. One module
// for both sides, so the build and the handler hash the same way on every runtime.

/** Bits per name: with `HASHES` probes, a name that is absent passes 0.8% of the time. */
export const BITS_PER_NAME = 10;
/** Probes per name: the best count for 10 bits per name (ln 2 × 10 ≈ 6.9). */
export const HASHES = 7;

/** `BLM1`: a file of another format (a later one) is not read as this one; the handler then reads every name. */
const MAGIC = 0x314d4c42;
/** Magic, hash count, bit count, name count: little-endian uint32 each, then the bits. */
const HEADER_BYTES = 16;

export interface NameFilter {
  /** False only for a name the build did not put in; true for every name it did (and ~0.8% of others). */
  has(name: string): boolean;
}

/** The second hash of the last `hashName` call: two results without an array made per lookup. */
let second = 0;

/**
 * Two 32-bit hashes of the name's UTF-16 units (the first returned, the second in `second`): FNV-1a
 * from two bases, each finished with murmur3's mix so that names differing in one last character
 * differ in every bit. Integer arithmetic only (Math.imul, >>>), the same on Node and workerd.
 */
function hashName(name: string): number {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  second = mix(b ^ 0x5bd1e995);
  return mix(a);
}

function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Whether every one of the name's `k` bits among `m` is set in `bits`, or with `set`, sets them:
 * double hashing (h1 + i·h2, exactly modulo `m`), one place for both sides.
 */
function probe(bits: Uint8Array, k: number, m: number, name: string, set: boolean): boolean {
  let at = hashName(name) % m;
  const step = second % m || 1;
  for (let i = 0; i < k; i++) {
    if (set) bits[at >>> 3]! |= 1 << (at & 7);
    else if ((bits[at >>> 3]! & (1 << (at & 7))) === 0) return false;
    at += step;
    if (at >= m) at -= m;
  }
  return true;
}

/** The filter's file: the same bytes for the same names in any order. */
export function nameFilterBytes(names: Iterable<string>): Uint8Array {
  const list = [...names];
  const m = Math.max(64, list.length * BITS_PER_NAME);
  const bytes = new Uint8Array(HEADER_BYTES + Math.ceil(m / 8));
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, HASHES, true);
  view.setUint32(8, m, true);
  view.setUint32(12, list.length, true);
  const bits = bytes.subarray(HEADER_BYTES);
  for (const name of list) probe(bits, HASHES, m, name, true);
  return bytes;
}

/** The filter in `bytes` (a copy: the reader's buffer may be reused), or undefined when they are not one this module wrote. */
export function parseNameFilter(bytes: Uint8Array | undefined): NameFilter | undefined {
  if (!bytes || bytes.byteLength < HEADER_BYTES) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  const k = view.getUint32(4, true);
  const m = view.getUint32(8, true);
  if (view.getUint32(0, true) !== MAGIC || k < 1 || k > 32 || m < 1 || bytes.byteLength !== HEADER_BYTES + Math.ceil(m / 8)) return undefined;
  const bits = bytes.slice(HEADER_BYTES);
  return { has: (name) => probe(bits, k, m, name, false) };
}
