// undici for the conformance suite: `request` adds the API token (see register.mjs).
import { request as send } from 'undici';

export * from 'undici';

export function request(url, options = {}) {
  const token = process.env.ASKUSER_CONFORMANCE_TOKEN;
  if (!token) return send(url, options);
  const headers = { ...(options.headers ?? {}) };
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) {
    headers.Authorization = `Bearer ${token}`;
  }
  return send(url, { ...options, headers });
}
