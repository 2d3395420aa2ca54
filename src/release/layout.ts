// The layout of a build folder, shared by the build that writes it and the server that reads it.
import path from 'node:path';

/** What a release keeps for the next build (src/build/reuse/record.ts). */
export const RECORD_FILE = 'record.ndjson';

/** Where the avatar and decoration image files of a build are. */
export interface MediaDirs {
  avatars: string;
  decorations: string;
}

/** Layout of a build folder (`dist/`), shared by the build that writes it and the server that reads it. */
export const buildLayout = (distDir: string) => ({
  client: path.join(distDir, 'client'),
  server: path.join(distDir, 'server'),
  /** What the next build needs of this one: page keys, answer times, kept columns (src/build/reuse/record.ts). */
  record: path.join(distDir, 'server', RECORD_FILE),
  pages: path.join(distDir, 'client', 'p'),
  media: {
    avatars: path.join(distDir, 'client', 'media', 'avatars'),
    decorations: path.join(distDir, 'client', 'media', 'decorations'),
  } satisfies MediaDirs,
});

