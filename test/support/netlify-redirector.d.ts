// netlify-redirector ships no types: the part of its API the tests use (its index.js, and netlify-cli's
// dist/utils/rules-proxy.js for the request's shape).
declare module 'netlify-redirector' {
  interface MatchRequest {
    scheme: string;
    host: string;
    path: string;
    query: string;
    getHeader(name: string): string;
    getCookie(name: string): string;
  }
  interface Matcher {
    match(req: MatchRequest): unknown;
  }
  const redirector: { parseJSON(rules: string, options: Record<string, unknown>): Promise<Matcher> };
  export default redirector;
}
