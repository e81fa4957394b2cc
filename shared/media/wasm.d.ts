// Wrangler and vitest-pool-workers load a `.wasm` import as a compiled WebAssembly.Module (CompiledWasm).
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}

// These two ship a wasm-bindgen .d.ts beside the .wasm (its exports), which is not how Workers import them.
declare module "@jsquash/png/codec/pkg/squoosh_png_bg.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
declare module "@jsquash/resize/lib/resize/pkg/squoosh_resize_bg.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
