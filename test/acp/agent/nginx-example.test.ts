import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../../../src/acp/agent/line-guard.js";

const example = readFileSync(new URL("../../../examples/service/nginx.conf", import.meta.url), "utf8");
const guide = readFileSync(new URL("../../../docs/service.md", import.meta.url), "utf8");

/** The directives alone: comments, blank lines and trailing blanks dropped. */
const directives = (config: string): string[] =>
  config
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trimEnd())
    .filter((line) => line.trim() !== "");

describe("examples/service/nginx.conf (the one nginx configuration, run by the failover test)", () => {
  it("lets through every request serve accepts: client_max_body_size = the default --max-message-bytes", () => {
    const sizes = [...example.matchAll(/^\s*client_max_body_size\s+(\d+)([kmg]?);/gim)].map(([, n, unit]) => Number(n) * 1024 ** " kmg".indexOf((unit || " ").toLowerCase()));
    expect(sizes).toEqual([DEFAULT_MAX_MESSAGE_BYTES]);
  });

  it("is what docs/service.md shows (without the comments)", () => {
    const shown = /The nginx configuration — `examples\/service\/nginx.conf`[\s\S]*?```nginx\n([\s\S]*?)```/.exec(guide)?.[1];
    expect(shown).toBeDefined();
    expect(directives(shown!)).toEqual(directives(example));
  });
});
