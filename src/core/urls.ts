/** True for an absolute http:// or https:// URL (what a peer may send where we fetch or show a web page). */
export function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol } = new URL(text);
  return protocol === "http:" || protocol === "https:";
}
