import type { ReactNode } from "react";

export const metadata = { title: "mcp-mount on Next.js" };

/** The root layout. */
export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
