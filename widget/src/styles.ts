// Everything lives in the shadow root. `!important` in :host beats even the page's `!important` rules
// on the host element (for important declarations the inner tree context wins), so the page can
// neither restyle nor hide the widget, nor leak inherited properties (font, colour) into it.
export const css = `
:host{all:initial!important;display:block!important}
*,*::before,*::after{box-sizing:border-box}
[hidden]{display:none!important}
.w{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1f2937;background:#fff;border:1px solid #e5e7eb;border-radius:12px;padding:16px;max-width:36rem;text-align:left;-webkit-text-size-adjust:100%}
h2{font-size:16px;font-weight:600;margin:0 0 8px;color:#111827}
h3{font-size:14px;font-weight:600;margin:0 0 8px;color:#111827}
p{margin:0}
ul{list-style:none;margin:0;padding:0}
a{color:#1d4ed8;text-decoration:underline;text-underline-offset:2px}
a:hover{color:#1e40af}
button,input{font:inherit;color:inherit;margin:0}
:focus-visible{outline:2px solid #2563eb;outline-offset:2px}
.sr{position:absolute!important;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.item{display:flex;align-items:center;gap:12px;padding:10px 2px;border-top:1px solid #f1f5f9}
.item:first-child{border-top:0}
.item.editing{align-items:flex-start}
.main{flex:1;min-width:0}
.name{font-weight:600;color:#111827}
.ident{color:#475569;overflow-wrap:anywhere}
.fav{flex:none;display:inline-flex;align-items:center;justify-content:center;width:28px;height:28px;border-radius:8px;background:#f1f5f9;color:#475569;font-weight:600;font-size:13px;overflow:hidden}
.fav img{width:16px;height:16px;display:block}
.opt .fav{width:22px;height:22px;border-radius:6px;font-size:11px}
.badge{display:inline-flex;align-items:center;gap:3px;margin-left:8px;padding:0 8px;border-radius:999px;background:#ecfdf5;color:#047857;font-size:12px;font-weight:500;vertical-align:1px}
.actions{display:flex;gap:6px;flex:none}
.btn{display:inline-flex;align-items:center;justify-content:center;min-height:32px;padding:5px 12px;border:1px solid #d1d5db;border-radius:8px;background:#fff;color:#1f2937;font-size:13px;font-weight:500;cursor:pointer}
.btn:hover{background:#f9fafb;border-color:#9ca3af}
.btn.primary{background:#2563eb;border-color:#2563eb;color:#fff}
.btn.primary:hover{background:#1d4ed8}
.btn.danger{color:#b91c1c}
.btn.danger:hover{background:#fef2f2;border-color:#fca5a5}
.btn.link{border-color:transparent;background:none;color:#1d4ed8;padding:5px 4px}
.empty{color:#64748b;padding:8px 0}
.about{margin:12px 0 0;font-size:12px;color:#64748b}
.panel{margin-top:12px;padding:12px;border:1px solid #e5e7eb;border-radius:10px;background:#f8fafc}
.field{margin-bottom:10px}
label{display:block;font-size:13px;font-weight:500;margin-bottom:4px;color:#374151}
.input{display:block;width:100%;padding:7px 10px;border:1px solid #cbd5e1;border-radius:8px;background:#fff;font-size:14px;line-height:1.4}
.input:focus{outline:2px solid #2563eb;outline-offset:0;border-color:#2563eb}
.input[aria-invalid=true]{border-color:#b91c1c}
.listbox{margin:4px 0 0;padding:4px;max-height:240px;overflow:auto;border:1px solid #cbd5e1;border-radius:8px;background:#fff;box-shadow:0 4px 12px rgba(15,23,42,.08)}
.opt{display:flex;align-items:center;gap:8px;padding:6px 8px;border-radius:6px;cursor:pointer}
.opt:hover{background:#f1f5f9}
.opt[aria-selected=true]{background:#dbeafe;color:#1e3a8a;outline:2px solid #2563eb;outline-offset:-2px}
.hint{margin-left:auto;font-size:12px;color:#64748b}
.note{margin-top:4px;font-size:13px;color:#64748b;overflow-wrap:anywhere}
.url{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px;color:#334155}
.warn{margin-top:6px;padding:6px 8px;border-radius:6px;background:#fffbeb;color:#92400e;font-size:13px}
.error{margin-top:6px;color:#b91c1c;font-size:13px}
.row{display:flex;gap:8px;flex-wrap:wrap;margin-top:10px}
.add{margin-top:8px}
.sync{margin-top:16px;padding-top:14px;border-top:1px solid #e5e7eb}
.sync .grid{display:grid;grid-template-columns:1fr 1fr;gap:10px}
@media (max-width:420px){.sync .grid{grid-template-columns:1fr}.item{flex-wrap:wrap}.actions{width:100%;justify-content:flex-end}}
.status{min-height:0;margin-top:8px;font-size:13px}
.status.ok{color:#047857}
.status.bad{color:#b91c1c}
`;
