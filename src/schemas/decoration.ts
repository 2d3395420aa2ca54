import { z } from 'astro/zod';
import { IMAGE_FILE_PATTERN, IMAGE_TYPES, NOT_EMPTY, text, hasVisible } from './common.ts';

/** `content/decorations/<id>.yaml`: a frame drawn over avatars; its image file sits beside it. */
export const DecorationSchema = z.strictObject({
  /** The name people see, e.g. `Sakura Petals`. */
  name: text(64).refine(hasVisible, { error: 'must not be empty' })
    .meta({ editorNotEmpty: NOT_EMPTY, description: 'The name people see, e.g. `Sakura Petals`; at most 64 characters.' }),
  /** The image file beside this YAML file, e.g. `sakura.png`. */
  file: z.string({ error: 'must be an image file name like `sakura.png`' }).regex(IMAGE_FILE_PATTERN, {
    error: `must be a plain image file name beside this file, ending in .${Object.keys(IMAGE_TYPES).join(', .')}`,
  }).meta({ description: `The image file beside this YAML file, e.g. \`sakura.png\` (.${Object.keys(IMAGE_TYPES).join(', .')}; no SVG).` }),
});
export type Decoration = z.infer<typeof DecorationSchema>;
