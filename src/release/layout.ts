// The layout of a build folder, shared by the build that writes it and the server that reads it.
import path from 'node:path';

export const PAGE_MANIFEST_FILE = 'page-manifest.json';
export const ANSWER_TIMES_FILE = 'answer-times.json';
export const KEPT_INDEX_FILE = 'kept-index.json';
export const CONTENT_DIGESTS_FILE = 'content-digests.json';

/** Where the avatar and decoration image files of a build are. */
export interface MediaDirs {
  avatars: string;
  decorations: string;
}

/** Layout of a build folder (`dist/`), shared by the build that writes it and the server that reads it. */
export const buildLayout = (distDir: string) => ({
  client: path.join(distDir, 'client'),
  server: path.join(distDir, 'server'),
  pageManifest: path.join(distDir, 'server', PAGE_MANIFEST_FILE),
  answerTimes: path.join(distDir, 'server', ANSWER_TIMES_FILE),
  /** What the next build's edit path needs of this one (src/build/kept-index.ts). */
  keptIndex: path.join(distDir, 'server', KEPT_INDEX_FILE),
  /** The digests of the content files outside `profiles/` this build read (src/content/file-digests.ts). */
  contentDigests: path.join(distDir, 'server', CONTENT_DIGESTS_FILE),
  pages: path.join(distDir, 'client', 'p'),
  media: {
    avatars: path.join(distDir, 'client', 'media', 'avatars'),
    decorations: path.join(distDir, 'client', 'media', 'decorations'),
  } satisfies MediaDirs,
});

