import { generateCertificates } from '../../../local/apiserver/certs.js';
for (let i = 0; i < 3; i++) { const t = Date.now(); generateCertificates(['127.0.0.1']); console.log('certs ms', Date.now() - t); }
