import { z } from 'astro/zod';
import { text } from './common.ts';

/** `content/creators/<username>.yaml`: marks an existing profile as a creator. */
export const CreatorSchema = z.strictObject({
  /** What the creator makes, e.g. `art`, `music`, `code`. Lists can be filtered by it. */
  category: text(64).refine((s) => s.trim().length > 0, { error: 'must not be empty' }),
  /** Featured creators come first in the creators list. */
  featured: z.boolean({ error: 'must be `true` or `false`' }).default(false),
});
export type Creator = z.infer<typeof CreatorSchema>;
