// /openapi.json: pre-rendered from the schemas and this build's data (src/api/openapi.ts).
import type { APIRoute } from 'astro';
import { getSite } from '../build/page-data.ts';
import { buildOpenApi } from '../api/openapi.ts';

export const GET: APIRoute = () => new Response(JSON.stringify(buildOpenApi(getSite()), null, 2));
