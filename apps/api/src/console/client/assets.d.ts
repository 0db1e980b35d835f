// esbuild bundles the stylesheets the console's modules import.
declare module '*.css';
