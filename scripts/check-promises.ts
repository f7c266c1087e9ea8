// Why this exists: the data layer is moving from synchronous SQLite to async, and the main risk is a
// forgotten `await` — a write that lands after its transaction committed, or a rejection nobody sees.
// Biome has no type-aware rules and we don't want ESLint, so this is a small, type-aware subset of
// typescript-eslint's no-floating-promises and no-misused-promises (checksConditionals), run over the
// program described by tsconfig.json in one pass.
//
// Usage: bun scripts/check-promises.ts [path/to/tsconfig.json]   (exits 1 when anything is found)
import path from "node:path";
import ts from "typescript";

const configPath = path.resolve(process.argv[2] ?? path.join(import.meta.dir, "..", "tsconfig.json"));
const config = ts.readConfigFile(configPath, ts.sys.readFile);
if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, "\n"));
const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, path.dirname(configPath));
const program = ts.createProgram(parsed.fileNames, parsed.options);
const checker = program.getTypeChecker();

const parts = (t: ts.Type) => (t.isUnion() ? t.types : [t]);
const isThenable = (t: ts.Type) => {
  const then = checker.getPropertyOfType(checker.getApparentType(t), "then");
  return !!then && checker.getTypeOfSymbol(then).getCallSignatures().length > 0;
};
const someThenable = (t: ts.Type) => parts(t).some(isThenable); // e.g. Promise<void> | undefined
const alwaysThenable = (t: ts.Type) => parts(t).every(isThenable); // `if (p)` where p may be undefined is fine
const isPromiseArray = (t: ts.Type) =>
  parts(t).some(
    (p) =>
      (checker.isArrayType(p) || checker.isTupleType(p)) &&
      checker.getTypeArguments(p as ts.TypeReference).some(someThenable),
  );
const typeOf = (n: ts.Node) => checker.getTypeAtLocation(n);
const unwrap = (n: ts.Expression): ts.Expression =>
  ts.isParenthesizedExpression(n) ? unwrap(n.expression) : n;
const isAssignment = (n: ts.Expression) =>
  ts.isBinaryExpression(n) &&
  n.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
  n.operatorToken.kind <= ts.SyntaxKind.LastAssignment;

// Is the value of this statement-level expression a promise (or promise array) that nothing handles?
function isFloating(node: ts.Expression): boolean {
  const e = unwrap(node);
  if (ts.isVoidExpression(e) || isAssignment(e)) return false;
  if (ts.isConditionalExpression(e)) return isFloating(e.whenTrue) || isFloating(e.whenFalse);
  if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.CommaToken)
    return isFloating(e.right);
  const t = typeOf(e);
  if (!someThenable(t)) return isPromiseArray(t);
  if (ts.isBinaryExpression(e)) return isFloating(e.right) || isFloating(e.left); // a && save(), a ?? p
  if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression)) {
    const method = e.expression.name.text;
    if (method === "catch" && e.arguments.length >= 1) return false;
    if (method === "then" && e.arguments.length >= 2) return false;
    if (method === "finally") return isFloating(e.expression.expression);
  }
  return true;
}

// `list.forEach(async (x) => ...)`: each callback's promise is dropped by forEach.
function isAsyncForEach(node: ts.Expression): boolean {
  const e = unwrap(node);
  if (!ts.isCallExpression(e) || !ts.isPropertyAccessExpression(e.expression)) return false;
  if (e.expression.name.text !== "forEach" || e.arguments.length === 0) return false;
  return typeOf(e.arguments[0])
    .getCallSignatures()
    .some((s) => someThenable(s.getReturnType()));
}

const findings: string[] = [];
const seen = new Set<ts.Node>();
let file!: ts.SourceFile;

function report(node: ts.Node) {
  if (seen.has(node)) return;
  seen.add(node);
  const { line, character } = file.getLineAndCharacterOfPosition(node.getStart(file));
  const text = node.getText(file).replace(/\s+/g, " ");
  const shown = text.length > 120 ? `${text.slice(0, 117)}...` : text;
  findings.push(`${path.relative(process.cwd(), file.fileName)}:${line + 1}:${character + 1}  ${shown}`);
}

// A promise used as a truth value is always truthy: almost certainly a missing `await`.
function checkConditional(node: ts.Expression, isTest: boolean) {
  const e = unwrap(node);
  if (ts.isBinaryExpression(e) && isLogical(e.operatorToken.kind)) {
    if (e.operatorToken.kind !== ts.SyntaxKind.QuestionQuestionToken || isTest)
      checkConditional(e.left, isTest);
    if (isTest) checkConditional(e.right, isTest); // `x = a && p` just yields p; only tests care about it
    return;
  }
  if (alwaysThenable(typeOf(e))) report(e);
}
const isLogical = (k: ts.SyntaxKind) =>
  k === ts.SyntaxKind.AmpersandAmpersandToken ||
  k === ts.SyntaxKind.BarBarToken ||
  k === ts.SyntaxKind.QuestionQuestionToken;

function visit(node: ts.Node) {
  if (ts.isExpressionStatement(node)) {
    if (isFloating(node.expression) || isAsyncForEach(node.expression)) report(node.expression);
  } else if (ts.isIfStatement(node) || ts.isWhileStatement(node) || ts.isDoStatement(node)) {
    checkConditional(node.expression, true);
  } else if (ts.isForStatement(node) && node.condition) {
    checkConditional(node.condition, true);
  } else if (ts.isConditionalExpression(node)) {
    checkConditional(node.condition, true);
  } else if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.ExclamationToken) {
    checkConditional(node.operand, true);
  } else if (ts.isBinaryExpression(node) && isLogical(node.operatorToken.kind)) {
    checkConditional(node, false);
  }
  ts.forEachChild(node, visit);
}

for (const sf of program.getSourceFiles()) {
  if (sf.isDeclarationFile || /[\\/](node_modules|dist)[\\/]/.test(sf.fileName)) continue;
  file = sf;
  visit(sf);
}

for (const line of findings) console.log(line);
if (findings.length > 0) {
  console.error(`\n${findings.length} unhandled or misused promise(s)`);
  process.exit(1);
}
