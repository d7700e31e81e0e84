/** MIME types of the file extensions skills usually carry. */
const BY_EXTENSION: Record<string, string> = {
  md: "text/markdown",
  markdown: "text/markdown",
  txt: "text/plain",
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  csv: "text/csv",
  html: "text/html",
  css: "text/css",
  js: "text/javascript",
  mjs: "text/javascript",
  ts: "text/x-typescript",
  py: "text/x-python",
  sh: "text/x-shellscript",
  xml: "application/xml",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf",
};

/** The MIME type of a skill file, from its extension; else by whether it is text. */
export function mimeTypeOf(path: string, content: string | Uint8Array): string {
  const dot = path.lastIndexOf(".");
  const known = dot > path.lastIndexOf("/") ? BY_EXTENSION[path.slice(dot + 1).toLowerCase()] : "";
  if (known) return known;
  return typeof content === "string" ? "text/plain" : "application/octet-stream";
}
