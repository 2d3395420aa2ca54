// Content from strangers: links are refused, never followed; images are checked by their bytes;
// every size has a limit, enforced before a file is read. docs/reliability.md cites these tests.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { loadContent } from '../../src/content/load.ts';
import { formatProblem } from '../../src/content/problems.ts';
import { ContentReader, YAML_LIMIT } from '../../src/content/read-file.ts';
import { imageKindOf } from '../../src/schemas/image-signature.ts';
import { MAX_CONTENT_BYTES, MAX_IMAGE_BYTES, MAX_YAML_FILE_BYTES } from '../../src/schemas/limits.ts';
import { FIXTURE } from '../support/helpers.ts';

const made: string[] = [];
afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });

const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostile-content-'));
  made.push(dir);
  return dir;
};

/** A copy of the fixture content, and beside it a `secret` file no content may reach. */
function fixtureCopy(): { dir: string; secret: string } {
  const parent = tempDir();
  const dir = path.join(parent, 'content');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  const secret = path.join(parent, 'secret');
  fs.writeFileSync(secret, 'TOKEN=hunter2\n');
  return { dir, secret };
}
const report = (dir: string) => loadContent(dir).problems.map((p) => formatProblem(p, dir));
const PROFILE = 'displayName: Bob\ncreatedAt: 2024-11-02T00:00:00Z\n';

// The first bytes of an image of each type, which is all the check reads (SIGNATURE_BYTES).
const PNG = fs.readFileSync(path.join(FIXTURE, 'avatars', 'alice.png'));
/** PNG's last 12 bytes: the IEND chunk. */
const IEND = PNG.subarray(PNG.length - 12);
/** A PNG of `bytes` in all: alice.png's signature and IHDR, a private chunk of padding, IEND. */
function pngOf(bytes: number): Buffer {
  const head = PNG.subarray(0, 33);
  const pad = bytes - head.length - 12 - IEND.length;
  const chunk = Buffer.alloc(12 + pad);
  chunk.writeUInt32BE(pad, 0);
  chunk.write('prVt', 4, 'latin1');
  return Buffer.concat([head, chunk, IEND]);
}
/** A PNG header declaring `width`×`height`, whole (IEND at its end). */
function pngDeclaring(width: number, height: number): Buffer {
  const png = Buffer.from(PNG);
  png.writeUInt32BE(width, 16);
  png.writeUInt32BE(height, 20);
  return png;
}
const IMAGES: Record<string, Buffer> = {
  'p.png': PNG,
  // A JFIF APP0 segment, a 1x1 frame header (SOF0) and the EOI marker; and the same without APP0.
  'j.jpg': Buffer.from('ffd8ffe000104a46494600010100000100010000ffc0000b080001000101011100ffd9', 'hex'),
  'j2.jpeg': Buffer.from('ffd8ffc0000b080001000101011100ffd9', 'hex'),
  // A whole 1x1 GIF and a whole 1x1 lossless WebP.
  'g.gif': Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64'),
  'w.webp': Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64'),
  // An ISO BMFF `ftyp` box: major brand `avif`; and as some encoders write it, `mif1` with `avif` compatible.
  // Each with a 1x1 image spatial extent (`ispe`) box after it.
  'a.avif': Buffer.concat([Buffer.from('0000001c667479706176696600000000', 'hex'), Buffer.from('avifmif1miaf'), Buffer.from('00000014697370650000000000000001 00000001'.replace(' ', ''), 'hex')]),
  'a2.avif': Buffer.concat([Buffer.from('000000206674797000000000', 'hex').fill(0, 8), Buffer.from('mif1'), Buffer.alloc(4), Buffer.from('mif1miafavif'), Buffer.from('0000001469737065000000000000000100000001', 'hex')]).fill('mif1', 8, 12),
};

describe('links are never followed', () => {
  test('a decoration image that is a link to a file outside is refused, named with the reason', () => {
    const { dir, secret } = fixtureCopy();
    fs.symlinkSync(secret, path.join(dir, 'decorations', 'x.png'));
    fs.writeFileSync(path.join(dir, 'decorations', 'x.yaml'), 'name: X\nfile: x.png\n');
    expect(report(dir)).toMatchInlineSnapshot(`
      [
        "decorations/x.png: is a symbolic link: links in the content folder are never followed
          hint: commit the file itself instead of a link to it (or delete the link)",
      ]
    `);
  });

  test('a profile, a creator, an avatar or the stats file that is a link is refused, even to a valid file inside', () => {
    const { dir } = fixtureCopy();
    fs.renameSync(path.join(dir, 'profiles', 'bob.yaml'), path.join(dir, 'bob.yaml'));
    fs.symlinkSync(path.join(dir, 'bob.yaml'), path.join(dir, 'profiles', 'bob.yaml'));
    fs.renameSync(path.join(dir, 'creators', 'kate.yaml'), path.join(dir, 'kate.yaml'));
    fs.symlinkSync('../kate.yaml', path.join(dir, 'creators', 'kate.yaml'));
    fs.renameSync(path.join(dir, 'avatars', 'alice.png'), path.join(dir, 'alice.png'));
    fs.symlinkSync('../alice.png', path.join(dir, 'avatars', 'alice.png'));
    fs.renameSync(path.join(dir, 'stats', 'views.yaml'), path.join(dir, 'views.yaml'));
    fs.symlinkSync('../views.yaml', path.join(dir, 'stats', 'views.yaml'));
    expect(report(dir).filter((l) => !l.includes('hint: did you mean'))).toMatchInlineSnapshot(`
      [
        "avatars/alice.png: is a symbolic link: links in the content folder are never followed
          hint: commit the file itself instead of a link to it (or delete the link)",
        "creators/kate.yaml: is a symbolic link: links in the content folder are never followed
          hint: commit the file itself instead of a link to it (or delete the link)",
        "profiles/bob.yaml: is a symbolic link: links in the content folder are never followed
          hint: commit the file itself instead of a link to it (or delete the link)",
        "stats/views.yaml: is a symbolic link: links in the content folder are never followed
          hint: commit the file itself instead of a link to it (or delete the link)",
      ]
    `);
  });

  test('a folder that is a link is refused: a content subfolder, or one nested anywhere', () => {
    const { dir, secret } = fixtureCopy();
    const outside = path.join(path.dirname(dir), 'outside');
    fs.mkdirSync(outside);
    fs.renameSync(path.join(dir, 'avatars'), path.join(outside, 'avatars'));
    fs.symlinkSync(path.join(outside, 'avatars'), path.join(dir, 'avatars'));
    fs.mkdirSync(path.join(dir, 'extra', 'deeper'), { recursive: true });
    fs.symlinkSync(path.dirname(secret), path.join(dir, 'extra', 'deeper', 'up'));
    fs.symlinkSync(secret, path.join(dir, 'profiles', '.hidden'));
    expect(report(dir)).toMatchInlineSnapshot(`
      [
        "avatars: is a symbolic link: links in the content folder are never followed
          hint: commit the file itself instead of a link to it (or delete the link)",
        "extra/deeper/up: is a symbolic link: links in the content folder are never followed
          hint: commit the file itself instead of a link to it (or delete the link)",
        "profiles/.hidden: is a symbolic link: links in the content folder are never followed
          hint: commit the file itself instead of a link to it (or delete the link)",
      ]
    `);
  });

  test('the content folder itself may not be a link; its real path loads', () => {
    const { dir } = fixtureCopy();
    const link = path.join(path.dirname(dir), 'linked-content');
    fs.symlinkSync(dir, link);
    expect(loadContent(link).problems.map((p) => `${p.message} (${p.hint})`)).toMatchInlineSnapshot(`
      [
        "the content folder is a symbolic link: links in the content folder are never followed (set CONTENT_DIR to the folder the link points to)",
      ]
    `);
    expect(loadContent(dir).problems).toEqual([]);
  });

  test.runIf(fs.existsSync('/proc/self/fd'))('a read through a folder that became a link after the listing is refused', () => {
    const { dir, secret } = fixtureCopy();
    const reader = new ContentReader(dir);
    expect(reader.rootProblem()).toBeUndefined();
    // The walk would refuse this link; the reader refuses it on its own, from the open descriptor.
    fs.rmSync(path.join(dir, 'profiles'), { recursive: true });
    fs.symlinkSync(path.dirname(secret), path.join(dir, 'profiles'));
    const r = reader.read(path.join(dir, 'profiles', 'secret'), YAML_LIMIT);
    expect(r.ok ? r.bytes.toString() : r.problems.map((p) => p.message)).toEqual([
      'is reached through a symbolic link to a folder: links in the content folder are never followed',
    ]);
  });

  test('a FIFO is refused without blocking, by the listing and by the reader', () => {
    const { dir } = fixtureCopy();
    const fifo = path.join(dir, 'avatars', 'bob.png');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    expect(report(dir)).toMatchInlineSnapshot(`
      [
        "avatars/bob.png: is a FIFO (named pipe), not a regular file
          hint: content files are plain files: delete it and commit the file itself",
      ]
    `);
    // Opened with O_NONBLOCK: without it, opening a FIFO nobody writes to waits forever.
    expect(new ContentReader(dir).checkImage(fifo).map((p) => p.message)).toEqual(['is a FIFO (named pipe), not a regular file']);
  });
});

describe('what is private stays private', () => {
  test('an alias (or merge key) outside `private:` of an anchor inside it is refused at its line; aliases within either side pass', () => {
    const { dir } = fixtureCopy();
    const write = (name: string, text: string) => fs.writeFileSync(path.join(dir, 'profiles', `${name}.yaml`), text);
    write('leak1', `private:\n  name: &n LEAKED-ONE\ndisplayName: *n\ncreatedAt: 2024-11-02T00:00:00Z\n`);
    write('leak2', `private:\n  m: &m { bio: LEAKED-TWO }\ndisplayName: Two\ncreatedAt: 2024-11-02T00:00:00Z\n<<: *m\n`);
    write('leak3', `private: &p\n  email: leaked@example.com\ndisplayName: Three\ncreatedAt: 2024-11-02T00:00:00Z\nsocials: *p\n`);
    write('fine', `displayName: &d Fine\ncreatedAt: 2024-11-02T00:00:00Z\nprivate:\n  copy: *d\n  note: &q x\n  again: *q\n`);
    const problems = report(dir);
    expect(problems.filter((p) => p.includes('profiles/fine.yaml'))).toEqual([]);
    for (const [name, line] of [['leak1', 3], ['leak2', 5], ['leak3', 5]] as const) {
      expect(problems.some((p) => p.includes(`profiles/${name}.yaml:${line}:`) && /copies a value from under `private:`/.test(p)), `${name}: ${problems.join('\n')}`).toBe(true);
    }
  });
});

describe('every problem of a file at once', () => {
  // On main at 09bad65 only the avatar was reported; the decoration, then the domain, came one fix at a time.
  test('a missing avatar, a missing decoration and a custom domain taken by another profile: all three', () => {
    const { dir } = fixtureCopy();
    const taken = fs.readdirSync(path.join(dir, 'profiles')).map((f) => /^customDomain: (\S+)$/m.exec(fs.readFileSync(path.join(dir, 'profiles', f), 'utf8'))?.[1]).find(Boolean)!;
    fs.writeFileSync(path.join(dir, 'profiles', 'zed.yaml'), `displayName: Zed\ncreatedAt: 2024-11-02T00:00:00Z\navatar: missing.png\ndecoration: nope\ncustomDomain: ${taken}\n`);
    const zed = report(dir).filter((p) => p.startsWith('profiles/zed.yaml'));
    expect(zed.map((p) => p.split('\n')[0])).toEqual([
      'profiles/zed.yaml:3:9 `avatar`: the avatar `missing.png` is not in `avatars/`',
      'profiles/zed.yaml:4:13 `decoration`: no decoration `nope` in `decorations/`',
      expect.stringMatching(new RegExp(`^profiles/zed\\.yaml:5:15 \`customDomain\`: the custom domain \`${taken.replace(/\./g, '\\.')}\` is also \`[a-z0-9_-]+\`'s: a domain serves one profile$`)),
    ]);
  });
});

describe('an alias of no anchor', () => {
  // On main at d78f454: "cannot be read as YAML: Unresolved alias (the anchor must be set before the alias): nope", no line.
  test('is a problem at the alias\'s line, with a hint, in a profile, a creator and the view counts', () => {
    const { dir } = fixtureCopy();
    fs.writeFileSync(path.join(dir, 'profiles', 'zed.yaml'), 'displayName: Zed\ncreatedAt: 2024-11-02T00:00:00Z\nbio: *nope\nlater: &nope x\n');
    fs.writeFileSync(path.join(dir, 'creators', 'dave.yaml'), 'category: *gone\n');
    const problems = report(dir);
    expect(problems.filter((p) => /names no anchor/.test(p))).toEqual([
      'creators/dave.yaml:1:11: the alias `*gone` names no anchor (`&gone`) set before it\n    hint: write the value out: profiles need no aliases',
      'profiles/zed.yaml:3:6: the alias `*nope` names no anchor (`&nope`) set before it\n    hint: write the value out: profiles need no aliases',
    ]);
  });
});

describe('what is private stays private, named any way', () => {
  test('a key that is an alias is refused at its line: `*k :` with `&k private` made a second private part no rule saw, and the alias out of it passed', () => {
    const { dir } = fixtureCopy();
    const write = (name: string, text: string) => fs.writeFileSync(path.join(dir, 'profiles', `${name}.yaml`), text);
    write('leak4', `bio: &k private\ncreatedAt: 2024-11-02T00:00:00Z\n*k :\n  email: &mail leaked@example.com\ndisplayName: *mail\n`);
    write('leak5', `createdAt: 2024-11-02T00:00:00Z\ndisplayName: &k Five\n*k : x\n`);
    const problems = report(dir);
    for (const [name, line] of [['leak4', 3], ['leak5', 3]] as const) {
      expect(problems.some((p) => p.includes(`profiles/${name}.yaml:${line}:`) && /`\*k` is used as a key/.test(p)), `${name}: ${problems.join('\n')}`).toBe(true);
    }
  });
});

describe('images are checked by their bytes', () => {
  test('an image of each type passes: PNG, JPEG, GIF, WebP, AVIF', () => {
    const { dir } = fixtureCopy();
    for (const [name, bytes] of Object.entries(IMAGES)) fs.writeFileSync(path.join(dir, 'avatars', name), bytes);
    expect(report(dir)).toEqual([]);
    expect(Object.values(IMAGES).map((b) => imageKindOf(b))).toEqual(['png', 'jpeg', 'jpeg', 'gif', 'webp', 'avif', 'avif']);
  });

  test('an image of no pixels is refused as such, not as too large', () => {
    const { dir } = fixtureCopy();
    fs.writeFileSync(path.join(dir, 'avatars', 'none.png'), pngDeclaring(0, 0));
    expect(report(dir)).toEqual(['avatars/none.png: is 0×0 px: an image with no pixels shows nothing\n    hint: export the image again from an image editor']);
  });

  test('a cut-short image, or one over 4096 px a side, is refused with a hint (a 40,000 px PNG in a few KB was published)', () => {
    const { dir } = fixtureCopy();
    fs.writeFileSync(path.join(dir, 'avatars', 'bomb.png'), pngDeclaring(40_000, 40_000));
    fs.writeFileSync(path.join(dir, 'avatars', 'cut.png'), PNG.subarray(0, 18));
    fs.writeFileSync(path.join(dir, 'avatars', 'cut.jpg'), IMAGES['j.jpg']!.subarray(0, 30));
    fs.writeFileSync(path.join(dir, 'avatars', 'cut.gif'), IMAGES['g.gif']!.subarray(0, 20));
    fs.writeFileSync(path.join(dir, 'avatars', 'cut.webp'), IMAGES['w.webp']!.subarray(0, 24));
    fs.writeFileSync(path.join(dir, 'avatars', 'cut.avif'), IMAGES['a.avif']!.subarray(0, 40));
    fs.writeFileSync(path.join(dir, 'avatars', 'wide.gif'), Buffer.concat([IMAGES['g.gif']!.subarray(0, 6), Buffer.from([0x01, 0x10, 0x01, 0x00]), IMAGES['g.gif']!.subarray(10)]));
    fs.writeFileSync(path.join(dir, 'avatars', 'edge.png'), pngDeclaring(4096, 4096));
    // A 1×1 screen and a 65535×65535 frame, which a browser draws at the frame's size (passed on main at f460a2f).
    const frame = Buffer.from(IMAGES['g.gif']!);
    frame.writeUInt16LE(0xffff, 32);
    frame.writeUInt16LE(0xffff, 34);
    fs.writeFileSync(path.join(dir, 'avatars', 'frame.gif'), frame);
    // Bytes after the end marker (a file appended to an image) are no whole image either.
    fs.writeFileSync(path.join(dir, 'avatars', 'extra.png'), Buffer.concat([PNG, Buffer.from('PK\x03\x04 appended')]));
    expect(report(dir)).toMatchInlineSnapshot(`
      [
        "avatars/bomb.png: is 40000×40000 px: an image may be at most 4096 px a side
          hint: scale it down: it is shown at most a few hundred pixels wide (512 px is plenty)",
        "avatars/cut.avif: is not one whole AVIF image: the file does not end where the image does (cut short by an upload or copy, or with bytes added after its end)
          hint: export or copy the image again; a whole AVIF file ends with its format's end marker, with nothing after it",
        "avatars/cut.gif: is not one whole GIF image: the file does not end where the image does (cut short by an upload or copy, or with bytes added after its end)
          hint: export or copy the image again; a whole GIF file ends with its format's end marker, with nothing after it",
        "avatars/cut.jpg: is not one whole JPEG image: the file does not end where the image does (cut short by an upload or copy, or with bytes added after its end)
          hint: export or copy the image again; a whole JPEG file ends with its format's end marker, with nothing after it",
        "avatars/cut.png: is not one whole PNG image: the file does not end where the image does (cut short by an upload or copy, or with bytes added after its end)
          hint: export or copy the image again; a whole PNG file ends with its format's end marker, with nothing after it",
        "avatars/cut.webp: is not one whole WebP image: the file does not end where the image does (cut short by an upload or copy, or with bytes added after its end)
          hint: export or copy the image again; a whole WebP file ends with its format's end marker, with nothing after it",
        "avatars/extra.png: is not one whole PNG image: the file does not end where the image does (cut short by an upload or copy, or with bytes added after its end)
          hint: export or copy the image again; a whole PNG file ends with its format's end marker, with nothing after it",
        "avatars/frame.gif: is 65535×65535 px: an image may be at most 4096 px a side
          hint: scale it down: it is shown at most a few hundred pixels wide (512 px is plenty)",
        "avatars/wide.gif: is 4097×1 px: an image may be at most 4096 px a side
          hint: scale it down: it is shown at most a few hundred pixels wide (512 px is plenty)",
      ]
    `);
  });

  test('SVG or HTML saved as .png, and bytes of another type, are refused with a hint', () => {
    const { dir } = fixtureCopy();
    fs.writeFileSync(path.join(dir, 'avatars', 'svg.png'), '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    fs.writeFileSync(path.join(dir, 'avatars', 'page.png'), '\uFEFF  <!doctype html><html><script>alert(1)</script></html>');
    fs.writeFileSync(path.join(dir, 'decorations', 'sakura.png'), IMAGES['j.jpg']!);
    fs.writeFileSync(path.join(dir, 'avatars', 'zip.webp'), Buffer.from('PK\u0003\u0004 not an image'));
    expect(report(dir)).toMatchInlineSnapshot(`
      [
        "avatars/page.png: is not a PNG image: its bytes are markup (SVG, HTML or XML), which a browser can run as a page with scripts
          hint: export it as a real PNG (SVG is refused on purpose); the first bytes of a PNG file are its signature",
        "avatars/svg.png: is not a PNG image: its bytes are markup (SVG, HTML or XML), which a browser can run as a page with scripts
          hint: export it as a real PNG (SVG is refused on purpose); the first bytes of a PNG file are its signature",
        "avatars/zip.webp: is not a WebP image: its first bytes are not a PNG, JPEG, GIF, WebP or AVIF signature
          hint: save it again as WebP with an image editor; renaming a file does not change its type",
        "decorations/sakura.png: is named as a PNG image but its bytes are a JPEG image
          hint: rename it to end in \`.jpg\` (and the name where it is used), or save it as PNG",
      ]
    `);
  });
});

describe('text is UTF-8, or an error with its line', () => {
  test('invalid UTF-8, UTF-16, and NUL bytes in any YAML file are refused, not turned into U+FFFD', () => {
    const { dir } = fixtureCopy();
    // A Latin-1 é on line 2.
    fs.writeFileSync(path.join(dir, 'profiles', 'bob.yaml'), Buffer.concat([Buffer.from('createdAt: 2024-11-02T00:00:00Z\ndisplayName: "Ren'), Buffer.from([0xe9]), Buffer.from('e"\n')]));
    fs.writeFileSync(path.join(dir, 'profiles', 'dave.yaml'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('displayName: Dave\ncreatedAt: 2024-01-01T00:00:00Z\n', 'utf16le')]));
    fs.writeFileSync(path.join(dir, 'creators', 'alice.yaml'), 'category: art\nfeatured: true\x00\n');
    // A surrogate encoded on its own (ED A0 80) in the decoration, on line 1.
    fs.writeFileSync(path.join(dir, 'decorations', 'sakura.yaml'), Buffer.concat([Buffer.from('name: "Sakura '), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"\nfile: sakura.png\n')]));
    expect(report(dir)).toMatchInlineSnapshot(`
      [
        "creators/alice.yaml:2:1: holds a NUL byte: it is binary, or UTF-16 text without a byte order mark
          hint: save it as UTF-8 text",
        "decorations/sakura.yaml:1:1: is not valid UTF-8 on this line (a byte of another encoding, such as Latin-1 or Windows-1252)
          hint: save the file as UTF-8, or retype the character on this line",
        "profiles/alice.yaml:8:13 \`decoration\`: no decoration \`sakura\` in \`decorations/\`
          hint: add decorations/sakura.yaml or remove the key",
        "profiles/bob.yaml:2:1: is not valid UTF-8 on this line (a byte of another encoding, such as Latin-1 or Windows-1252)
          hint: save the file as UTF-8, or retype the character on this line",
        "profiles/dave.yaml:1:1: is UTF-16 text: content files are UTF-8
          hint: save it as UTF-8 (your editor's "Save with encoding" or \`iconv -f UTF-16 -t UTF-8\`)",
      ]
    `);
  });

  test('a UTF-8 byte order mark is fine', () => {
    const { dir } = fixtureCopy();
    fs.writeFileSync(path.join(dir, 'profiles', 'bob.yaml'), `\uFEFFdisplayName: Bob\ncreatedAt: 2024-11-02T00:00:00Z\n`);
    expect(report(dir)).toEqual([]);
  });
});

describe('size limits', () => {
  test('a YAML file over the limit is refused with its size, the limit and a fix', () => {
    const { dir } = fixtureCopy();
    fs.writeFileSync(path.join(dir, 'profiles', 'bob.yaml'), `${PROFILE}private:\n  note: "${'x'.repeat(MAX_YAML_FILE_BYTES)}"\n`);
    fs.writeFileSync(path.join(dir, 'creators', 'bob.yaml'), `category: art\n# ${'x'.repeat(MAX_YAML_FILE_BYTES)}\n`);
    expect(report(dir)).toMatchInlineSnapshot(`
      [
        "creators/bob.yaml: is 128.0 KiB, over the limit of 128 KiB for a content YAML file
          hint: shorten it: a profile needs far less (long notes under \`private:\` belong elsewhere, they are never published)",
        "profiles/bob.yaml: is 128.1 KiB, over the limit of 128 KiB for a content YAML file
          hint: shorten it: a profile needs far less (long notes under \`private:\` belong elsewhere, they are never published)",
      ]
    `);
  });

  test('an image over the limit is refused; one at the limit passes', () => {
    const { dir } = fixtureCopy();
    fs.writeFileSync(path.join(dir, 'avatars', 'big.png'), pngOf(MAX_IMAGE_BYTES + 1));
    fs.writeFileSync(path.join(dir, 'avatars', 'max.png'), pngOf(MAX_IMAGE_BYTES));
    expect(report(dir)).toMatchInlineSnapshot(`
      [
        "avatars/big.png: is 1.0 MiB, over the limit of 1 MiB for an image
          hint: scale it down (it is shown at most a few hundred pixels wide) or compress it",
      ]
    `);
  });

  test('an oversized file is refused from its size, before it is read: a 64 GiB profile or image costs nothing', () => {
    const { dir } = fixtureCopy();
    // Sparse files: reading either whole would need 64 GiB of memory.
    const huge = 64 * 1024 ** 3;
    fs.truncateSync(path.join(dir, 'profiles', 'bob.yaml'), huge);
    fs.writeFileSync(path.join(dir, 'avatars', 'huge.png'), PNG);
    fs.truncateSync(path.join(dir, 'avatars', 'huge.png'), huge);
    expect(loadContent(dir).problems.map((p) => `${path.relative(dir, p.file)}: ${p.message}`)).toEqual([
      'avatars/huge.png: is 64 GiB, over the limit of 1 MiB for an image',
      'profiles/bob.yaml: is 64 GiB, over the limit of 128 KiB for a content YAML file',
    ]);
  });

  test('the whole folder over its limit is one problem, and reading stops there', () => {
    const { dir } = fixtureCopy();
    // Sparse images just under the image limit, enough to pass the total.
    const count = Math.floor(MAX_CONTENT_BYTES / MAX_IMAGE_BYTES) + 1;
    for (let i = 0; i < count; i++) {
      const file = path.join(dir, 'avatars', `a${i}.png`);
      fs.writeFileSync(file, PNG.subarray(0, 33));
      fs.truncateSync(file, MAX_IMAGE_BYTES - IEND.length);
      fs.appendFileSync(file, IEND);
    }
    const r = loadContent(dir);
    expect(r.problems.map((p) => `${path.relative(path.dirname(dir), p.file)}: ${p.message}\n    ${p.hint}`)).toMatchInlineSnapshot(`
      [
        "content: the content folder holds more than 2 GiB of files (the limit for the whole folder); stopped reading at avatars/a999.png
          remove files that are not needed (images no profile uses, old profiles), or split the site",
      ]
    `);
  });
});

describe('shapes the yaml library is slow on', () => {
  // stats/views.yaml may be 16 MiB, and the library is quadratic on some shapes (a flow list of
  // empty entries: 1.6 s per 128 KiB, minutes per MiB), so the file is held to the lines
  // `npm run views:import` writes before the library reads it.
  test('stats/views.yaml with a flow collection is a problem at its line, never given to the library', () => {
    const { dir } = fixtureCopy();
    const views = path.join(dir, 'stats', 'views.yaml');
    fs.writeFileSync(views, `# counts\ndave: 12\n${`[a${' ,'.repeat(20_000)}]`}\n`);
    expect(report(dir)).toEqual([
      'stats/views.yaml:3:1: has a `[...]` or `{...}` collection: this file holds `username: count` lines (as `npm run views:import` writes it)\n    hint: write one `username: count` line per profile',
    ]);
    // 16 MiB of list entries ran the yaml library out of memory (on main at 4d1097c); an indented,
    // a nested, a `?` and a block line are no `username: count` lines either.
    for (const [body, line] of [[`dave: 12\n${'-\n'.repeat(8 * 1024 * 1024 - 5)}`, 2], ['dave: 12\n  alice: 3\n', 2], ['? dave\n: 12\n', 1], ['alice:\n  nested: 1\n', 2], ['dave: |\n  12\n', 2], ['- dave: 12\n', 1]] as const) {
      fs.writeFileSync(views, body);
      expect(report(dir), body.slice(0, 30)).toEqual([
        `stats/views.yaml:${line}:1: is no \`username: count\` line from its first column (a list entry, an indented or a nested line): this file holds \`username: count\` lines (as \`npm run views:import\` writes it)\n    hint: write one \`username: count\` line per profile`,
      ]);
    }
    // CRLF, a BOM, trailing spaces and comments after a count are the same lines.
    fs.writeFileSync(views, '\uFEFF# counts [imported]\r\ndave: 12  \r\nalice: 3 # {from the log}\r\n\r\n');
    const r = loadContent(dir);
    expect(r.problems).toEqual([]);
    expect([...r.content.views]).toEqual([['dave', 12], ['alice', 3]]);
  });
});
