import { expect } from "vitest";

/** Plays the human at a key page: opens it, then submits `key` from it (as the browser would). */
export async function typeKey(url: string, key: string): Promise<{ page: string; saved: string }> {
  const page = await (await fetch(url)).text();
  const saved = await fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(url).origin }, body: new URLSearchParams({ key }) });
  expect(saved.status).toBe(200);
  return { page, saved: await saved.text() };
}
