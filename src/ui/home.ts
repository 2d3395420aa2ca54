// The home page (src/pages/index.astro): the first creators of the creators list (featured, then
// most viewed), how many there are, and the way to every profile. The first ones only: at 1,000,000
// profiles the 20,000 active creators made a 5 MB page of 20,000 list items, which a phone lays out
// slowly, and every edit that added or removed a profile rendered and compressed it again.

/** Creators the home page shows: a screenful or two on a desktop, a few on a phone. */
export const HOME_CREATORS = 60;

/** The creators the home page shows, of the active creators in list order. */
export const homeCreators = <T>(creators: readonly T[]): readonly T[] => creators.slice(0, HOME_CREATORS);
