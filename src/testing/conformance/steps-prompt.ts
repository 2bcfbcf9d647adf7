import { pathToFileURL } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import type { Run } from "./run.js";
import { newSession } from "./steps-session.js";
import { describeTurn, inconclusiveByKit, isValidStopReason, lateUpdates, runTurn, stopReasonOf, summarizeLate, textBlock, type Turn } from "./turns.js";
import { delay, describeOutcome, type WireAgent } from "./wire.js";

/** A response later than this after session/cancel cannot be a race with a finishing turn. */
const CANCEL_RACE_MS = 500;

/** 1×1 red PNG and a 4-sample silent 8 kHz WAV: the smallest valid media to offer. */
const TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const TINY_WAV = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAAAAAAAAAA==";

const PROMPT_IDS = [
  "prompt.stop-reason",
  "prompt.update-order",
  "prompt.resource-link",
  "prompt.image",
  "prompt.image-refused",
  "prompt.audio",
  "prompt.audio-refused",
  "prompt.embedded-context",
  "prompt.embedded-context-refused",
  "cancel.turn",
  "cancel.next-prompt",
  "cancel.permission",
];

export async function checkPrompts(run: Run, agent: WireAgent, sessionId: string): Promise<void> {
  if (!run.wantsAny(...PROMPT_IDS)) return;
  if (run.skipPrompts) {
    for (const id of PROMPT_IDS) run.skip(id, "--skip-prompts: no prompt turns are run");
    return;
  }
  const turn = await mainTurn(run, agent, sessionId, [textBlock(run.prompts.text)]);
  judgeStopReason(run, turn);
  if (run.wants("prompt.resource-link")) {
    const link: acp.ContentBlock = { type: "resource_link", uri: pathToFileURL(run.notesFile).href, name: "acp-check-notes.txt", mimeType: "text/plain" };
    const linked = await mainTurn(run, agent, sessionId, [textBlock(run.prompts.text), link]);
    if (isValidStopReason(stopReasonOf(linked.outcome))) run.pass("prompt.resource-link", `accepted; ${describeTurn(linked)}`);
    else if (!inconclusiveByKit(run, "prompt.resource-link", linked)) run.fail("prompt.resource-link", `a prompt with a resource_link got ${describeTurn(linked)}`);
  }
  const media: [string, string, acp.ContentBlock][] = [
    ["image", "promptCapabilities.image", { type: "image", data: TINY_PNG, mimeType: "image/png" }],
    ["audio", "promptCapabilities.audio", { type: "audio", data: TINY_WAV, mimeType: "audio/wav" }],
    ["embedded-context", "promptCapabilities.embeddedContext", { type: "resource", resource: { uri: pathToFileURL(run.notesFile).href, mimeType: "text/plain", text: "agentkit-acp conformance check: embedded context." } }],
  ];
  for (const [name, capability, block] of media) await checkContent(run, agent, sessionId, name, capability, block);
  await checkCancel(run, agent, sessionId);
  await checkPermissionCancel(run, agent);
  judgeUpdateOrder(run);
}

/** A turn in the main session (counted: session/load must replay these). */
async function mainTurn(run: Run, agent: WireAgent, sessionId: string, prompt: acp.ContentBlock[]): Promise<Turn> {
  const turn = await runTurn(run, agent, sessionId, prompt);
  if (turn.outcome.kind === "result") run.mainTurns += 1;
  return turn;
}

function article(word: string): string {
  return `${/^[aeiou]/.test(word) ? "an" : "a"} ${word}`;
}

function judgeStopReason(run: Run, turn: Turn): void {
  const reason = stopReasonOf(turn.outcome);
  if (isValidStopReason(reason)) run.pass("prompt.stop-reason", `${describeTurn(turn)} after ${turn.updates.length} update(s)`);
  else if (inconclusiveByKit(run, "prompt.stop-reason", turn)) return;
  else if (reason !== undefined) run.fail("prompt.stop-reason", `stopReason ${JSON.stringify(reason)} is not a v1 stop reason`);
  else run.fail("prompt.stop-reason", `session/prompt "${run.prompts.text}": ${describeOutcome(turn.outcome)}`);
}

async function checkContent(run: Run, agent: WireAgent, sessionId: string, name: string, capability: string, block: acp.ContentBlock): Promise<void> {
  const accepted = `prompt.${name}`;
  const refused = `prompt.${name}-refused`;
  if (!run.wantsAny(accepted, refused)) return;
  const advertised = run.advertises(capability);
  run.skip(advertised ? refused : accepted, `${capability} is ${advertised ? "" : "not "}advertised`);
  if (!run.wants(advertised ? accepted : refused)) return;
  const turn = await mainTurn(run, agent, sessionId, [textBlock(run.prompts.text), block]);
  const ok = isValidStopReason(stopReasonOf(turn.outcome));
  if (advertised) {
    if (ok) run.pass(accepted, `${article(block.type)} block was accepted; ${describeTurn(turn)}`);
    else if (!inconclusiveByKit(run, accepted, turn)) run.fail(accepted, `${article(block.type)} block (advertised) got ${describeTurn(turn)}`);
  } else if (turn.outcome.kind === "error") {
    run.pass(refused, `${article(block.type)} block was refused (${describeOutcome(turn.outcome)})`);
  } else {
    run.fail(refused, `${article(block.type)} block was accepted although ${capability} is not advertised (${describeTurn(turn)}); allowed, since the client must not send it`);
  }
}

/** session/cancel as soon as the turn shows activity (or after a second); then the next prompt. */
async function checkCancel(run: Run, agent: WireAgent, sessionId: string): Promise<void> {
  if (!run.wantsAny("cancel.turn", "cancel.next-prompt")) return;
  let cancelAt: number | undefined;
  const stop = new AbortController();
  let bound: NodeJS.Timeout | undefined;
  const cancel = (): void => {
    if (cancelAt !== undefined) return;
    cancelAt = Date.now();
    void agent.notify(acp.methods.agent.session.cancel, { sessionId });
    bound = setTimeout(() => stop.abort(), run.cancelBoundMs);
  };
  const previous = agent.permission;
  agent.permission = () => {
    cancel(); // the spec's order: session/cancel first, then `cancelled` for pending permission requests
    return { outcome: { outcome: "cancelled" } };
  };
  const fallback = setTimeout(cancel, 1_000);
  let turn: Turn;
  try {
    turn = await runTurn(run, agent, sessionId, [textBlock(run.prompts.cancel)], { stop: stop.signal, onActivity: cancel });
  } finally {
    clearTimeout(fallback);
    clearTimeout(bound);
    agent.permission = previous;
  }
  const ended = judgeCancel(run, turn, cancelAt, "cancel.turn", "the turn", CANCEL_RACE_MS);
  if (!run.wants("cancel.next-prompt")) return;
  if (!ended) {
    run.skip("cancel.next-prompt", "the cancelled turn did not end, or was not cancelled (see cancel.turn)");
    return;
  }
  const next = await mainTurn(run, agent, sessionId, [textBlock(run.prompts.text)]);
  if (isValidStopReason(stopReasonOf(next.outcome)) && stopReasonOf(next.outcome) !== "cancelled") run.pass("cancel.next-prompt", `the next prompt ended with ${describeTurn(next)}`);
  else if (!inconclusiveByKit(run, "cancel.next-prompt", next)) run.fail("cancel.next-prompt", `the prompt after the cancelled turn got ${describeTurn(next)}`);
}

/**
 * Judges a turn cancelled at `cancelAt`; true when it ended as a cancelled turn should. `raceMs`:
 * how soon after the cancel another stop reason counts as a finishing turn rather than a bug.
 */
function judgeCancel(run: Run, turn: Turn, cancelAt: number | undefined, id: string, what: string, raceMs: number, context = ""): boolean {
  const reason = stopReasonOf(turn.outcome);
  const answeredAt = turn.response?.at;
  if (cancelAt === undefined || (answeredAt !== undefined && answeredAt < cancelAt)) {
    run.skip(id, `${what} ended (${describeTurn(turn)}) before session/cancel was sent; use a prompt that keeps the agent busy longer`);
    return false;
  }
  const latency = answeredAt !== undefined ? answeredAt - cancelAt : undefined;
  if (reason === "cancelled" && latency !== undefined) {
    run.pass(id, `stopReason "cancelled" ${latency} ms after session/cancel${context}`);
    return true;
  }
  if (turn.outcome.kind === "timeout") {
    run.fail(id, `no answer to session/prompt within ${run.cancelBoundMs} ms after session/cancel`);
    return false;
  }
  if (turn.outcome.kind !== "result") {
    run.fail(id, `after session/cancel the prompt got ${describeOutcome(turn.outcome)}; a cancelled turn must answer stopReason "cancelled", not an error`);
    return false;
  }
  if (latency !== undefined && latency <= raceMs) {
    run.warn(id, `${describeTurn(turn)} ${latency} ms after session/cancel: the turn probably finished as the cancel arrived; rerun with a longer prompt`);
    return true;
  }
  run.fail(id, `${describeTurn(turn)} ${latency ?? "?"} ms after session/cancel; the agent kept working instead of answering "cancelled"`);
  return false;
}

/**
 * The permission prompt in its own session. When the agent asks permission for its tool call,
 * the request is left pending while session/cancel is sent and a round trip has passed (the
 * agent has seen the cancel), then answered `cancelled`, as the spec orders. The turn must end
 * `cancelled`; an agent that ignores the cancel and reads the answer as a rejection fails.
 */
async function checkPermissionCancel(run: Run, agent: WireAgent): Promise<void> {
  if (!run.wants("cancel.permission")) return;
  const created = await newSession(run, agent);
  if (created.sessionId === undefined) {
    run.fail("cancel.permission", `could not create a session for the permission prompt: ${describeOutcome(created.outcome)}`);
    return;
  }
  const sessionId = created.sessionId;
  let cancelAt: number | undefined;
  const stop = new AbortController();
  let bound: NodeJS.Timeout | undefined;
  const previous = agent.permission;
  let asked: acp.RequestPermissionRequest | undefined;
  agent.permission = async (params) => {
    if (params.sessionId === sessionId && cancelAt === undefined) {
      asked = params;
      cancelAt = Date.now();
      bound = setTimeout(() => stop.abort(), run.cancelBoundMs);
      await agent.notify(acp.methods.agent.session.cancel, { sessionId });
      await agent.call("_agentkit_check/ping", {}, Math.min(run.timeoutMs, 5_000));
      await delay(run.settleMs);
    }
    return { outcome: { outcome: "cancelled" } };
  };
  let turn: Turn;
  try {
    turn = await runTurn(run, agent, sessionId, [textBlock(run.prompts.permission)], { stop: stop.signal });
  } finally {
    clearTimeout(bound);
    agent.permission = previous;
  }
  if (cancelAt === undefined) {
    run.skip("cancel.permission", `the agent asked no permission for "${run.prompts.permission}" (${describeTurn(turn)}); it may run tools without asking — set a prompt that needs approval`);
    return;
  }
  // The agent was waiting for our answer: no race is possible, anything but "cancelled" is wrong.
  const tool = asked?.toolCall.title ?? asked?.toolCall.toolCallId ?? "?";
  judgeCancel(run, turn, cancelAt, "cancel.permission", "the turn", 0, `, sent while permission for "${tool}" was pending`);
}

function judgeUpdateOrder(run: Run): void {
  if (!run.wants("prompt.update-order")) return;
  const late = lateUpdates(run);
  if (late.violations.length > 0) run.fail("prompt.update-order", summarizeLate(late.violations));
  else if (late.sessionLevel.length > 0) run.warn("prompt.update-order", `turn content came in order, but session-level updates followed a response: ${summarizeLate(late.sessionLevel)}`);
  else run.pass("prompt.update-order", `${late.turns} response(s), no update after any of them`);
}
