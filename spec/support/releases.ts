import { ADMIN_TOKEN } from './agent-socket.js';

/** POSTs multipart/form-data to /admin/agent-releases with real fetch FormData. */
export async function uploadRelease(base: string, version: string | undefined, files: { name: string; content: Buffer; field?: string }[]) {
  const form = new FormData();
  if (version !== undefined) form.append('version', version);
  for (const f of files) form.append(f.field ?? 'files', new Blob([new Uint8Array(f.content)]), f.name);
  const res = await fetch(`${base}/control/v1/admin/agent-releases`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: form });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text, headers: res.headers };
}
