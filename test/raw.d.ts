// Vite's `?raw` imports (the generated-table check of docs/admin.md in shared/registry/docs.test.ts, the webhook recipe in docs/apps.md).
declare module "*.md?raw" {
  const text: string;
  export default text;
}
declare module "*.ts?raw" {
  const text: string;
  export default text;
}
// Vite's `import.meta.glob` (shared/orders/status-writers.test.ts reads every source file as text).
interface ImportMeta {
  glob(patterns: string | string[], options: { query: "?raw"; import: "default"; eager: true }): Record<string, unknown>;
  // Every statement module, loaded for its declarations (shared/db/statement.test.ts).
  glob(patterns: string | string[], options: { eager: true }): Record<string, unknown>;
}
