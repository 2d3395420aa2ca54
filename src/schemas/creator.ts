import { z } from 'astro/zod';
import { NOT_EMPTY, text, hasVisible } from './common.ts';

/** `content/creators/<username>.yaml`: marks an existing profile as a creator. */
export const CreatorSchema = z.strictObject({
  /** What the creator makes, e.g. `art`, `music`, `code`. Lists can be filtered by it. */
  category: text(64).refine(hasVisible, { error: 'must not be empty' })
    .meta({ editorNotEmpty: NOT_EMPTY, description: 'What the creator makes, e.g. `art`, `music`, `code`; at most 64 characters. Lists can be filtered by it.' }),
  /** Featured creators come first in the creators list. */
  featured: z.boolean({ error: 'must be `true` or `false`' }).default(false)
    .meta({ description: 'Featured creators come first in the creators list. `true` or `false` (the default).' }),
});
export type Creator = z.infer<typeof CreatorSchema>;
