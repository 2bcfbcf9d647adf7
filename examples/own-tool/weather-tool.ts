/**
 * A tool of your own: a name, a description the model reads, a kind (how editors show it), an
 * input schema and `execute`. The schema may be zod 3 or 4, valibot, arktype — any Standard
 * Schema; the model is sent its JSON Schema, and the model's input is validated against it
 * before `execute` runs (invalid input goes back to the model as an error result).
 */
import { z } from "zod";
import { defineTool, errorResult } from "agentkit-acp/tools";

const conditions = ["sunny", "cloudy", "light rain", "snow"] as const;

export const weatherTool = defineTool({
  name: "get_weather",
  description: "The weather forecast for a city, one line per day.",
  kind: "fetch",
  input: z.object({
    city: z.string().min(1).describe("the city, e.g. Bern"),
    days: z.number().int().min(1).max(7).optional().describe("how many days, 1 to 7 (default 1)"),
  }),
  title: ({ city }) => `Weather in ${city}`,
  async execute({ city, days = 1 }, context) {
    // A real tool would call a weather service here, passing context.signal so Cancel stops it.
    if (context.signal.aborted) return errorResult("cancelled");
    const lines = Array.from({ length: days }, (_, day) => `day ${day + 1}: ${conditions[(city.length + day) % conditions.length]}`);
    return { text: `${city}\n${lines.join("\n")}`, isError: false, data: { city, days } };
  },
});
