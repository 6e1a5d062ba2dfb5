#include "net/xpra/testing/tls_certs.h"

#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace pixpath::xpra::testing {
namespace {

Error cert_error(std::string why) { return Error(ErrorCode::Internal, "xpra", "make test cert", std::move(why)); }

bool add_ext(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

}  // namespace

Result<TestCert> make_test_cert(const std::string& dir, const std::string& name,
                                const TestCertOptions& o) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  if (!key) return cert_error("EVP_EC_gen failed");
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  static long serial = 1;
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), o.valid_from_days * 86400);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), o.valid_until_days * 86400);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(o.common_name.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), subject);
  std::string san;
  for (const auto& d : o.dns_names) san += (san.empty() ? "" : ",") + ("DNS:" + d);
  for (const auto& ip : o.ips) san += (san.empty() ? "" : ",") + ("IP:" + ip);
  if (!add_ext(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !add_ext(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign") ||
      !add_ext(cert.get(), NID_ext_key_usage, "serverAuth") ||
      !add_ext(cert.get(), NID_subject_key_identifier, "hash") ||
      (!san.empty() && !add_ext(cert.get(), NID_subject_alt_name, san)))
    return cert_error("cannot add the extensions");
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) <= 0) return cert_error("X509_sign failed");
  TestCert out{fmt::format("{}/{}.crt", dir, name), fmt::format("{}/{}.key", dir, name)};
  FILE* c = std::fopen(out.cert_file.c_str(), "wb");
  if (!c) return cert_error("cannot write " + out.cert_file);
  const bool wrote_cert = PEM_write_X509(c, cert.get()) == 1;
  std::fclose(c);
  FILE* k = std::fopen(out.key_file.c_str(), "wb");
  if (!k) return cert_error("cannot write " + out.key_file);
  const bool wrote_key = PEM_write_PrivateKey(k, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(k);
  if (!wrote_cert || !wrote_key) return cert_error("PEM write failed");
  return out;
}

SSL_CTX* make_tls_server_ctx(const TestCert& cert, int max_version) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (max_version) {
    SSL_CTX_set_security_level(ctx, 0);
    SSL_CTX_set_min_proto_version(ctx, TLS1_VERSION);
    SSL_CTX_set_max_proto_version(ctx, max_version);
  }
  SSL_CTX_use_certificate_file(ctx, cert.cert_file.c_str(), SSL_FILETYPE_PEM);
  SSL_CTX_use_PrivateKey_file(ctx, cert.key_file.c_str(), SSL_FILETYPE_PEM);
  return ctx;
}

}  // namespace pixpath::xpra::testing
