import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { MAX_GLYPH_CODE_POINTS, avatarImageSize, generatedPreviewFile, imageSize, previewGlyph, previewImage } from '../../src/ui/og-image.ts';
import { FIXTURE, ROOT } from '../support/helpers.ts';

describe('og-image', () => {
  test('imageSize reads PNG, JPEG and GIF headers, and nothing else', () => {
    expect(imageSize(fs.readFileSync(path.join(FIXTURE, 'avatars', 'alice.png')))).toEqual({ type: 'image/png', width: 64, height: 64 });
    expect(imageSize(fs.readFileSync(path.join(ROOT, 'content', 'avatars', 'noor-haddad.jpg')))).toEqual({ type: 'image/jpeg', width: 128, height: 128 });
    expect(imageSize(Buffer.from('GIF89a\x90\x01\x2c\x01', 'latin1'))).toEqual({ type: 'image/gif', width: 400, height: 300 });
    expect(imageSize(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toBeUndefined();
    expect(imageSize(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00]))).toBeUndefined();
  });

  test('an avatar under 144 px or of a type crawlers skip gets the generated preview', () => {
    const avatars = path.join(FIXTURE, 'avatars');
    expect(avatarImageSize(avatars, 'alice.png')).toEqual({ type: 'image/png', width: 64, height: 64 });
    expect(avatarImageSize(avatars, 'missing.png')).toBeUndefined();
    const alice = previewImage('https://x.test', { username: 'alice', displayName: 'Alice' }, avatars, 'alice.png');
    expect(alice).toMatchObject({ generated: true, width: 400, height: 400, type: 'image/png' });
    expect(alice.url).toMatch(/^https:\/\/x\.test\/media\/og\/\d+-41\.png$/);
    const big = previewImage('https://x.test', { username: 'noor', displayName: 'Noor' }, path.join(ROOT, 'content', 'avatars'), 'pixelfox.png');
    expect(big).toEqual({ url: 'https://x.test/media/avatars/pixelfox.png', generated: false, type: 'image/png', width: 512, height: 512 });
  });

  test('generated file names: hue and initial code points; emoji and symbols share the person', () => {
    expect(generatedPreviewFile(210, previewGlyph('anna'))).toBe('210-41.png');
    expect(generatedPreviewFile(0, previewGlyph('김하나'))).toBe('0-ae40.png');
    expect(generatedPreviewFile(30, previewGlyph('🌸 Bloom'))).toBe('30-person.png');
    expect(generatedPreviewFile(30, previewGlyph('  '))).toBe('30-person.png');
  });

  test('an initial piled with combining marks is the person: its file name stays short (it was ENAMETOOLONG)', () => {
    expect(generatedPreviewFile(30, previewGlyph(`a${'\u0301'.repeat(63)}`))).toBe('30-person.png');
    expect(generatedPreviewFile(0, previewGlyph('Ệ'.normalize('NFD')))).toBe('0-45-323-302.png');
    // The longest initial still drawn names a file well under a file name's 255 bytes.
    expect(generatedPreviewFile(350, previewGlyph(`a${'\u0301'.repeat(MAX_GLYPH_CODE_POINTS - 1)}`)).length).toBeLessThan(64);
  });
});
