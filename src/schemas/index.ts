// The content format v1, one schema per content kind. These are the one definition of the format:
// the build, `npm run check` and the scripts all import them.
export * from './common.ts';
export * from './profile.ts';
export * from './creator.ts';
export * from './decoration.ts';
export * from './stats.ts';
export * from './api.ts';
export * from './queries.ts';
