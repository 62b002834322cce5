//! Trusting a BMC's certificate: the shared HTTPS trust ([`crate::tls`]),
//! its explanations worded for a BMC.

pub use crate::tls::{client_config, read_pem_certs, refuse_all, SeenCert, TlsSetupError};

/// A lowercase explanation of a TLS failure, with what to do about it.
pub fn explain(e: &rustls::Error) -> String {
    crate::tls::explain(e, "the BMC")
}

#[cfg(test)]
mod tests {
    #[test]
    fn explanations_name_the_bmc() {
        let e = super::explain(&rustls::Error::InvalidCertificate(
            rustls::CertificateError::Expired,
        ));
        assert_eq!(
            e,
            "the BMC's certificate is not trusted: it has expired; trust it with --ca-cert \
             (the BMC's certificate or its CA), pin it with --ssl-fingerprint, or skip the \
             check with --ssl-insecure"
        );
    }
}
