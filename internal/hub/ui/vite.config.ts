import { defineConfig, type ProxyOptions } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The hub builds into ../dist, which internal/hub embeds (go:embed) and
// serves at "/". emptyOutDir is off so that dist/.gitkeep stays; the
// generator (scripts/generate-contracts.mjs) empties the rest first.
//
// `vite` and `vite preview` (development only) forward the API to a running
// `toolhost serve` at TOOLHOST_DEV_SERVER (http://127.0.0.1:8080 by
// default); sign in through the hub as usual.
const target = process.env.TOOLHOST_DEV_SERVER ?? 'http://127.0.0.1:8080';
const proxy: Record<string, ProxyOptions> = {
  '/api': { target },
  '/openapi.json': { target },
  '/mkdocs': { target },
};

export default defineConfig({
  base: '/',
  plugins: [svelte()],
  server: { proxy },
  preview: { proxy },
  build: {
    outDir: '../dist',
    emptyOutDir: false,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
});
