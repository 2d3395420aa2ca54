// /openapi.json: pre-rendered from the schemas and this build's data (src/lib/openapi.ts).
import type { APIRoute } from 'astro';
import { getSite } from '../lib/build-data.ts';
import { buildOpenApi } from '../lib/openapi.ts';

export const GET: APIRoute = () => new Response(JSON.stringify(buildOpenApi(getSite()), null, 2));
