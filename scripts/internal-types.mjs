// The published declarations (dist/**/*.d.ts) must match the API reference (typedoc with
// excludeInternal): nothing tagged `@internal` in src/ may appear in them. tsc's stripInternal
// (tsconfig.build.json) drops those declarations; this script, run by `npm run build` after tsc:
//   1. seals each class whose constructor is @internal: stripInternal leaves such a class with no
//      constructor declared, which reads as a public `new X()` taking no arguments; it gets
//      `private constructor();` (not constructible, not extendable, as the reference shows it);
//   2. fails (exit 1, naming each leak) if a declaration tagged @internal in src/ is still in its
//      .d.ts, if any .d.ts still says "@internal", or if a .d.ts no longer type-checks (e.g. an
//      export by name of a stripped declaration).
// Usage: node scripts/internal-types.mjs [ROOT] (ROOT holds src/ and dist/; default: this checkout).
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = process.argv[2] ?? fileURLToPath(new URL("..", import.meta.url));

function files(dir, suffix) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return files(full, suffix);
    return entry.name.endsWith(suffix) ? [full] : [];
  });
}

function parse(file) {
  return ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
}

/** tsc's own test (stripInternal): a leading comment of the node that contains "@internal". */
function isInternal(node, source) {
  const ranges = ts.getLeadingCommentRanges(source.text, node.pos) ?? [];
  return ranges.some((range) => source.text.slice(range.pos, range.end).includes("@internal"));
}

function nameOf(node) {
  if (ts.isConstructorDeclaration(node)) return "constructor";
  return node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name) || ts.isPrivateIdentifier(node.name)) ? node.name.text : undefined;
}

/** Top-level declarations by name, and the members of each class and interface, of one file. */
function declarations(source) {
  const found = [];
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const decl of statement.declarationList.declarations) if (ts.isIdentifier(decl.name)) found.push({ name: decl.name.text, node: statement, owner: undefined });
      continue;
    }
    const name = nameOf(statement);
    if (name === undefined) continue;
    found.push({ name, node: statement, owner: undefined });
    if (ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement)) {
      for (const member of statement.members) {
        const memberName = nameOf(member);
        if (memberName !== undefined) found.push({ name: memberName, node: member, owner: name });
      }
    }
  }
  return found;
}

const key = (d) => (d.owner ? `${d.owner}.${d.name}` : d.name);

/** Adds `private constructor();` to the class `owner` of a .d.ts text; unchanged if it has a constructor. */
function seal(text, file, owner) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const cls = source.statements.find((s) => ts.isClassDeclaration(s) && s.name?.text === owner);
  if (!cls || cls.members.some((m) => ts.isConstructorDeclaration(m))) return text;
  const brace = text.indexOf("{", cls.name.end);
  return `${text.slice(0, brace + 1)}\n    private constructor();${text.slice(brace + 1)}`;
}

const problems = [];
const dist = join(root, "dist");
for (const file of files(join(root, "src"), ".ts")) {
  if (file.endsWith(".d.ts") || file.includes(join("inspect", "page"))) continue;
  const source = parse(file);
  const internal = declarations(source).filter((d) => isInternal(d.node, source));
  if (internal.length === 0) continue;
  const dts = join(dist, relative(join(root, "src"), file)).replace(/\.ts$/, ".d.ts");
  if (!existsSync(dts)) {
    problems.push(`${relative(root, dts)}: missing (run tsc -p tsconfig.build.json first)`);
    continue;
  }
  let text = readFileSync(dts, "utf8");
  for (const d of internal) if (d.name === "constructor") text = seal(text, dts, d.owner);
  writeFileSync(dts, text);
  const published = new Map(declarations(parse(dts)).map((d) => [key(d), d.node]));
  for (const d of internal) {
    const node = published.get(key(d));
    const sealed = d.name === "constructor" && node?.modifiers?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword) && node.parameters.length === 0;
    if (node && !sealed) problems.push(`${relative(root, dts)}: ${key(d)} is @internal in ${relative(root, file)} but published`);
  }
}

const declarationFiles = existsSync(dist) ? files(dist, ".d.ts") : [];
for (const dts of declarationFiles) {
  if (readFileSync(dts, "utf8").includes("@internal")) problems.push(`${relative(root, dts)}: still says @internal (tsc strips only a declaration's leading comment; is stripInternal set?)`);
}
// Our declarations alone (the dependencies' are not ours to check): a stripped declaration that
// something published still names is an error here.
const program = ts.createProgram(declarationFiles, { target: ts.ScriptTarget.ES2023, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true, types: ["node"] });
for (const dts of declarationFiles) {
  for (const diagnostic of program.getSemanticDiagnostics(program.getSourceFile(dts))) {
    problems.push(`${relative(root, dts)}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`);
  }
}

if (problems.length > 0) {
  process.stderr.write(`The published types do not match the API reference (@internal):\n${problems.map((p) => `  ${p}`).join("\n")}\n`);
  process.exit(1);
}
