// The keys the record keeps for each profile (a page's, an input's, an answer's: `rowKey`, 96 bits
// of SHA-1) in one buffer of 12 bytes a row, not a string a row: at 1,000,000 profiles a build told
// of one edit read three million key strings from the served record, 0.35-0.5 s of its 1.1 s read,
// and the collector's time they cost besides (BENCHMARKS.md, "Keys in bytes").

/** Bytes of a key: `rowKey`'s 16 base64url characters. */
export const KEY_BYTES = 12;
/** A row without a key is 12 zero bytes, which SHA-1 gives no input but with odds of 1 in 2^96. */
const NONE = Buffer.alloc(KEY_BYTES);
const scratch = Buffer.alloc(KEY_BYTES);

/** `key` (16 base64url characters) in `scratch`; throws on a string of another length or other characters. */
function keyBytes(key: string): Buffer {
  if (typeof key !== 'string' || key.length !== 16 || scratch.write(key, 0, KEY_BYTES, 'base64url') !== KEY_BYTES) {
    throw new TypeError(`not a row key: ${JSON.stringify(key)}`);
  }
  return scratch;
}

/**
 * A column of keys, one per row, each a `rowKey` or null. A column read from a served record is
 * frozen (`freeze`): a build that would change it throws, as on the record's frozen arrays.
 */
export class KeyColumn {
  readonly length: number;
  readonly #bytes: Buffer;
  #frozen = false;

  /** `length` rows, each null; or the rows in `bytes` (12 a row, taken, not copied). */
  constructor(length: number, bytes?: Buffer) {
    if (bytes && bytes.length !== length * KEY_BYTES) throw new RangeError(`${bytes.length} bytes are not ${length} keys`);
    this.length = length;
    this.#bytes = bytes ?? Buffer.alloc(length * KEY_BYTES);
  }

  /** The column of `keys`. */
  static from(keys: readonly (string | null | undefined)[]): KeyColumn {
    const column = new KeyColumn(keys.length);
    for (let i = 0; i < keys.length; i++) column.set(i, keys[i] ?? null);
    return column;
  }

  /** Whether `value` is a column of `length` rows. */
  static is(value: unknown, length: number): value is KeyColumn {
    return value instanceof KeyColumn && value.length === length;
  }

  /** Row `i`'s key, or null. */
  get(i: number): string | null {
    this.#check(i);
    const at = i * KEY_BYTES;
    return this.#bytes.compare(NONE, 0, KEY_BYTES, at, at + KEY_BYTES) === 0 ? null : this.#bytes.toString('base64url', at, at + KEY_BYTES);
  }

  /** Whether row `i`'s key is `key` (null: no key), without making a string of it. */
  has(i: number, key: string | null): boolean {
    this.#check(i);
    const at = i * KEY_BYTES;
    return this.#bytes.compare(key === null ? NONE : keyBytes(key), 0, KEY_BYTES, at, at + KEY_BYTES) === 0;
  }

  /** Whether row `i` holds row `j` of `other`. */
  sameAs(i: number, other: KeyColumn, j: number): boolean {
    this.#check(i);
    other.#check(j);
    return this.#bytes.compare(other.#bytes, j * KEY_BYTES, (j + 1) * KEY_BYTES, i * KEY_BYTES, (i + 1) * KEY_BYTES) === 0;
  }

  /** Whether rows `first` to `end` (not included) hold `other`'s from row `from` on. */
  sameRows(first: number, end: number, other: KeyColumn, from: number): boolean {
    if (first < 0 || end > this.length || end < first || from < 0 || from + end - first > other.length) return false;
    return this.#bytes.compare(other.#bytes, from * KEY_BYTES, (from + end - first) * KEY_BYTES, first * KEY_BYTES, end * KEY_BYTES) === 0;
  }

  /** Sets row `i` to `key` (null: no key). */
  set(i: number, key: string | null): void {
    this.#writable(i);
    (key === null ? NONE : keyBytes(key)).copy(this.#bytes, i * KEY_BYTES);
  }

  /** Sets row `i` to row `j` of `other`. */
  setFrom(i: number, other: KeyColumn, j: number): void {
    this.#writable(i);
    other.#check(j);
    other.#bytes.copy(this.#bytes, i * KEY_BYTES, j * KEY_BYTES, (j + 1) * KEY_BYTES);
  }

  /** A column whose row `i` is this one's row `places[i]`, or null where it is negative; rows that follow each other are copied as one. */
  gather(places: ArrayLike<number>): KeyColumn {
    const to = new KeyColumn(places.length);
    for (let i = 0; i < places.length;) {
      const from = places[i]!;
      let end = i + 1;
      if (from >= 0) {
        this.#check(from);
        while (end < places.length && places[end] === from + end - i && from + end - i < this.length) end++;
        this.#bytes.copy(to.#bytes, i * KEY_BYTES, from * KEY_BYTES, (from + end - i) * KEY_BYTES);
      }
      i = end;
    }
    return to;
  }

  /** A copy, not frozen. */
  copy(): KeyColumn {
    return new KeyColumn(this.length, Buffer.from(this.#bytes));
  }

  /** No row changes from now on. */
  freeze(): this {
    this.#frozen = true;
    return this;
  }

  get frozen(): boolean {
    return this.#frozen;
  }

  /** Rows `first` to `first + count` in base64, as a line of the record holds them. */
  toBase64(first: number, count: number): string {
    return this.#bytes.toString('base64', first * KEY_BYTES, (first + count) * KEY_BYTES);
  }

  /** Sets rows from `first` on to the keys `text` (`toBase64`'s) holds; false when it does not hold `count`. */
  setBase64(first: number, count: number, text: unknown): boolean {
    if (count === 0) return text === '';
    this.#writable(first);
    if (typeof text !== 'string' || first + count > this.length) return false;
    const bytes = Buffer.from(text, 'base64');
    if (bytes.length !== count * KEY_BYTES) return false;
    bytes.copy(this.#bytes, first * KEY_BYTES);
    return true;
  }

  /** Every row's key (tests, and anything that wants them as text). */
  toArray(): (string | null)[] {
    return Array.from({ length: this.length }, (_, i) => this.get(i));
  }

  #check(i: number): void {
    if (!Number.isInteger(i) || i < 0 || i >= this.length) throw new RangeError(`row ${i} of ${this.length}`);
  }

  #writable(i: number): void {
    if (this.#frozen) throw new TypeError('a frozen key column does not change');
    this.#check(i);
  }
}
