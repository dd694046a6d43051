// The hub's calls, all through the typed client (toolhost-client). A 401
// from any of them sends the browser to /signin.
import { ApiError, createClient, type Catalog, type ComputeRequest, type ComputeResponse, type Diagnostics, type Session } from 'toolhost-client';
import { checkCatalog } from './contracts';
import { navigate } from './router.svelte';

export const client = createClient();

async function guarded<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.code === 'auth.csrf')) {
      navigate('/signin', true);
    }
    throw err;
  }
}

export async function getCatalog(): Promise<Catalog> {
  const a = await guarded(client.GET('/api/v1/tools/catalog'));
  return checkCatalog(a.data);
}

export async function getDiagnostics(): Promise<Diagnostics> {
  const a = await guarded(client.GET('/api/v1/tools/diagnostics'));
  return a.data as unknown as Diagnostics;
}

export async function compute(req: ComputeRequest, timeoutMs: number): Promise<ComputeResponse> {
  const a = await guarded(client.POST('/api/v1/tools/compute', { body: req, timeoutMs }));
  return a.data as unknown as ComputeResponse;
}

export async function signIn(token: string): Promise<Session> {
  const a = await client.raw<Session>('POST', '/api/v1/auth/session', { body: { token } });
  return a.data;
}

export async function signOut(): Promise<void> {
  await client.raw<unknown>('DELETE', '/api/v1/auth/session');
}

export async function session(): Promise<Session | null> {
  try {
    return (await client.raw<Session>('GET', '/api/v1/auth/session')).data;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}
