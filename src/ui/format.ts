// Numbers and dates in the human form pages show: "48.2k views", "joined March 2021".

const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });
const monthYear = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric', timeZone: 'UTC' });

export const formatViews = (views: number) => `${compact.format(views).toLowerCase()} ${views === 1 ? 'view' : 'views'}`;
export const formatJoined = (iso: string) => `joined ${monthYear.format(new Date(iso))}`;
