// Vite's `?raw` imports (the README check in shared/docs.test.ts, the webhook recipe in docs/apps.md).
declare module "*.md?raw" {
  const text: string;
  export default text;
}
declare module "*.ts?raw" {
  const text: string;
  export default text;
}
