import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The hub builds into ../dist, which internal/hub embeds (go:embed) and
// serves at "/". emptyOutDir is off so that dist/.gitkeep stays; the
// generator (scripts/generate-contracts.mjs) empties the rest first.
export default defineConfig({
  base: '/',
  plugins: [svelte()],
  build: {
    outDir: '../dist',
    emptyOutDir: false,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
});
