// Vite's `?raw` imports (the README check in shared/procedures/docs.test.ts).
declare module "*.md?raw" {
  const text: string;
  export default text;
}
