// Vite's `?raw` imports (the README check in shared/docs.test.ts).
declare module "*.md?raw" {
  const text: string;
  export default text;
}
