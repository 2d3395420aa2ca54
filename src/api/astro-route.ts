// The Astro side of the on-demand API: the catch-all routes under src/pages/api and
// src/pages/service-api re-export this, so `astro dev` answers exactly like our server.
import type { APIRoute } from 'astro';
import { dispatch } from './handler.ts';
import { fromWebRequest } from '../http/request.ts';
import { toWebResponse } from '../http/response.ts';

export const ALL: APIRoute = async ({ request, locals }) => toWebResponse(await dispatch(locals.site, fromWebRequest(request)));
