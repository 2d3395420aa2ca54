// /openapi.json: pre-rendered from the schemas and this build's data (src/api/openapi.ts).
import type { APIRoute } from 'astro';
import { buildOpenApi } from '../api/openapi.ts';
import { getSiteIndex } from '../build/astro/page-data.ts';
import { jsonDocument, toWebResponse } from '../http/response.ts';

export const GET: APIRoute = () => toWebResponse(jsonDocument(JSON.stringify(buildOpenApi(getSiteIndex()), null, 2)));
