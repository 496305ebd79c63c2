import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { consortTools, inputJsonSchema, openAIResponsesTools, openAITools, outputJsonSchema } from "../tools/index.js";
import { printResult } from "./output.js";

/** `consort tools`: the agents' tool registry, listed or rendered as an OpenAI tool specification. */

/** The committed copy of the OpenAI specification; a test fails when it falls behind the registry. */
export const OPENAI_SPEC_PATH = "tools/openai-tools.json";

/** The exact text `consort tools --openai` prints and the committed file holds. */
export function openAISpecText(flavour: "chat" | "responses" = "chat"): string {
  const tools = flavour === "chat" ? openAITools(consortTools) : openAIResponsesTools(consortTools);
  return `${JSON.stringify(tools, null, 2)}\n`;
}

export function registerToolsCommands(program: Command): void {
  program
    .command("tools")
    .description("List the tools Consort gives coding agents, or print them as an OpenAI function-tool specification")
    .option("--openai", "print the OpenAI function tools (Chat Completions `tools` array, strict schemas)")
    .option("--responses", "with --openai: the flat form the OpenAI Responses API takes")
    .option("--out <file>", "with --openai: write the specification to this file instead of stdout")
    .option("--json", "list the tools as JSON (names, descriptions, input and output JSON Schemas)")
    .addHelpText("after", `\nRegenerate the committed copy with: npm run tools:openai (writes ${OPENAI_SPEC_PATH})`)
    .action(async (options: { openai?: boolean; responses?: boolean; out?: string; json?: boolean }) => {
      if (options.openai) {
        const text = openAISpecText(options.responses ? "responses" : "chat");
        if (options.out) {
          await writeFile(options.out, text);
          process.stderr.write(`wrote ${consortTools.length} tools to ${options.out}\n`);
        } else process.stdout.write(text);
        return;
      }
      const listing = consortTools.map((tool) => ({
        name: tool.name,
        title: tool.title,
        readOnly: tool.readOnly,
        description: tool.description,
        inputSchema: inputJsonSchema(tool),
        outputSchema: outputJsonSchema(tool),
      }));
      printResult(options, { tools: listing }, () =>
        listing
          .map((tool) => `${tool.name}${tool.readOnly ? "" : " (changes database branches)"}\n  ${tool.description}`)
          .join("\n\n"),
      );
    });
}
