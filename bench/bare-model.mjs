// The bare agent both floors share (bench/bare-openai.mjs on stdio, bench/bare-http-agent.mjs over
// the SDK's HTTP/WebSocket server): an ACP agent written directly on the official SDK that streams
// one model reply with plain fetch + hand-rolled SSE parsing (no AI SDK, no loop, no store) and
// sends each text delta as one agent_message_chunk. With `history`, each session keeps its
// conversation and sends it whole with every prompt, as any chat agent must (what serve sends).
import * as acp from "@agentclientprotocol/sdk";

/** Yields each SSE event's data string. */
async function* sseData(body) {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split("\n")) if (line.startsWith("data: ")) yield line.slice(6);
    }
  }
}

async function* textDeltas(baseUrl, format, messages, signal) {
  const anthropic = format === "anthropic";
  const response = await fetch(anthropic ? `${baseUrl}/messages` : `${baseUrl}/chat/completions`, {
    method: "POST",
    headers: anthropic
      ? { "content-type": "application/json", "x-api-key": "test", "anthropic-version": "2023-06-01" }
      : { "content-type": "application/json" },
    body: JSON.stringify({ model: "mock", stream: true, max_tokens: 8192, messages }),
    signal,
  });
  if (!response.ok || !response.body) throw new Error(`model answered ${response.status}`);
  for await (const data of sseData(response.body)) {
    if (data === "[DONE]") return;
    const event = JSON.parse(data);
    if (anthropic) {
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") yield event.delta.text;
    } else {
      const text = event.choices?.[0]?.delta?.content;
      if (text) yield text;
    }
  }
}

let sessions = 0;

/** The agent app (one per connection over HTTP; session ids are unique in the process). */
export function bareAgent(baseUrl, format = "openai", { history = false } = {}) {
  const conversations = new Map();
  return acp
    .agent({ name: "bare-openai" })
    .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: {}, authMethods: [], agentInfo: { name: "bare-openai", version: "1" } }))
    .onRequest(acp.methods.agent.session.new, () => {
      const sessionId = `bare_${++sessions}`;
      if (history) conversations.set(sessionId, []);
      return { sessionId };
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      const messageId = `msg_${Date.now()}`;
      const prompt = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join("");
      const messages = conversations.get(params.sessionId) ?? [];
      messages.push({ role: "user", content: prompt });
      let reply = "";
      for await (const text of textDeltas(baseUrl, format, messages)) {
        reply += text;
        await client.notify(acp.methods.client.session.update, {
          sessionId: params.sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, messageId },
        });
      }
      if (history) messages.push({ role: "assistant", content: reply });
      return { stopReason: "end_turn" };
    });
}
