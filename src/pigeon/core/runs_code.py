"""Which attachments can run code when opened, so ``O`` asks first: by the name (normalised as the desktop reads
it), by the MIME type the mail claims, and by the contents, whatever the name says (a launcher named ``.txt`` is
still a launcher). No Textual here.
"""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from typing import TYPE_CHECKING

from pigeon.core.attachments import attachment_bytes, attachment_filename
from pigeon.sanitize import clean_line

if TYPE_CHECKING:
    from pigeon.models import ContentBlock

# The types that can run code when opened on the desktops Pigeon opens files on (xdg on Linux and the BSDs, macOS,
# Windows), by what runs them. One table: a type is added here and nowhere else.
RUNS_CODE: dict[str, str] = {
    "a Windows program or installer": (
        "exe com scr pif msi msix msixbundle msp mst appx appxbundle appinstaller application appref-ms xbap "
        "cpl dll ocx sys drv gadget"
    ),
    "a Windows script": (
        "bat cmd btm ps1 ps1xml ps2 ps2xml psc1 psc2 psd1 psm1 vb vbs vbe js jse wsf wsh wsc ws sct hta msc "
        "msh msh1 msh2 mshxml msh1xml msh2xml"
    ),
    "a Windows shortcut or setting that runs a program": (
        "lnk url scf inf reg library-ms searchconnector-ms settingcontent-ms theme themepack desklink iqy slk "
        "job ins isp chm hlp diagcab xll"
    ),
    "a disk image the desktop mounts and may run": "iso img vhd vhdx dmg sparseimage sparsebundle udf",
    "a macOS program, installer or script": (
        "app command tool terminal workflow action pkg mpkg scpt scptd applescript osax prefpane kext plugin "
        "webloc inetloc fileloc"
    ),
    "a Linux launcher, program or package": (
        "desktop kdelnk directory appimage flatpak flatpakref flatpakrepo snap deb rpm run bin elf out so ko"
    ),
    "a shell script": "sh bash zsh fish csh tcsh ksh dash ash",
    "a script or program of a language runtime": (
        "py pyw pyc pyo pyz pyzw pl pm rb php phar lua tcl tk r awk mjs cjs jar class jnlp apk ipa xpi crx oxt "
        "sln csproj vbproj vcxproj"
    ),
    "a PostScript program": "ps eps epsf epsi",
    "an office file that may carry macros": (
        "doc dot docm dotm wbk xls xlt xla xlm xlsm xltm xlam xlsb ppt pot pps ppa pptm potm ppsm ppam sldm "
        "one onepkg pub mdb mde accdb accde ade adp mda rtf"
    ),
    "an OpenDocument file that may carry macros": (
        "odt ott ods ots odp otp odg otg odf odb odm oth fodt fods fodp fodg sxw stw sxc stc sxi sti sxd std sxm"
    ),
    "a web page or image that runs scripts": "html htm xhtml xht shtml mht mhtml svg svgz xml xsl xslt",
}
"""Why a type runs code -> its extensions (lower case, no dot)."""

EXTENSIONS = {ext: why for why, exts in RUNS_CODE.items() for ext in exts.split()}

_RISKY_TYPES = (
    "application/x-msdownload application/x-msdos-program application/x-ms-dos-executable application/x-executable "
    "application/x-elf application/x-mach-binary application/x-sharedlib application/vnd.microsoft.portable-executable "
    "application/x-msi application/x-ms-installer application/x-ms-application application/x-apple-diskimage "
    "application/vnd.debian.binary-package application/x-rpm application/x-redhat-package-manager "
    "application/vnd.android.package-archive application/java-archive application/x-java-archive "
    "application/x-java-jnlp-file application/java-vm application/x-desktop application/x-sh application/x-shellscript "
    "text/x-shellscript application/x-csh application/javascript text/javascript application/ecmascript "
    "application/x-python text/x-python application/x-perl text/x-perl application/x-ruby application/x-php "
    "application/hta application/x-ms-shortcut application/x-mswinurl application/x-iso9660-image "
    "application/x-bat application/x-powershell application/postscript application/eps image/x-eps "
    "application/msword application/vnd.ms-excel application/vnd.ms-powerpoint application/vnd.ms-access "
    "application/vnd.ms-htmlhelp application/rtf text/rtf text/html application/xhtml+xml image/svg+xml "
    "message/rfc822 multipart/related application/x-mimearchive application/xml text/xml application/xslt+xml "
    "application/x-xpinstall application/x-chrome-extension application/vnd.appimage application/x-appimage"
)
RISKY_TYPES = frozenset(_RISKY_TYPES.split())
_RISKY_TYPE_PARTS = ("macroenabled", "application/vnd.oasis.opendocument.", "application/vnd.sun.xml.")


def normalised_name(name: str | None) -> str:
    """The name as the desktop reads it for its type: cleaned (no bidi tricks or invisible characters), folded
    (full-width letters, case), without the trailing dots and spaces that Windows drops and that hide the type."""
    base = unicodedata.normalize("NFKC", attachment_filename(name)).casefold()
    while base != (stripped := base.rstrip().rstrip(".")):
        base = stripped
    return base


def extension_of(name: str | None) -> str:
    """The type a desktop opens ``name`` as: the last extension of the normalised name ("" for none)."""
    base = normalised_name(name)
    return base.rsplit(".", 1)[-1] if "." in base else ""


# --- contents -----------------------------------------------------------------------------------------------------

SNIFFED = 8192
_MAGIC = (
    (b"#!", "a script"),
    (b"\x7fELF", "a program (ELF)"),
    (b"MZ", "a Windows program"),
    (b"\xfe\xed\xfa\xce", "a macOS program"),
    (b"\xfe\xed\xfa\xcf", "a macOS program"),
    (b"\xce\xfa\xed\xfe", "a macOS program"),
    (b"\xcf\xfa\xed\xfe", "a macOS program"),
    (b"\xca\xfe\xba\xbe", "a macOS or Java program"),
    (b"%!", "a PostScript program"),
    (b"\xc5\xd0\xd3\xc6", "a PostScript program"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old office file or installer, which may carry macros"),
    (b"{\\rt", "an RTF document, which may embed programs"),
    (b"L\x00\x00\x00\x01\x14\x02\x00", "a Windows shortcut"),
    (b"!<arch>\ndebian", "a Debian package"),
    (b"\xed\xab\xee\xdb", "an RPM package"),
    (b"xar!", "a macOS installer"),
    (b"\x00asm", "a WebAssembly program"),
)
# Text that makes a launcher, a script or a page, anywhere in the first bytes (case ignored).
_TEXT_SIGNS = re.compile(
    rb"^\s*\[(?:kde )?desktop entry\]|^\s*\[internetshortcut\]|^\s*\[\.shellclassinfo\]|^\s*@echo\s+off"
    rb"|^\s*(?:windows registry editor|regedit4)|<jnlp[\s>]|<script[\s>/]|<html[\s>]|<!doctype\s+html|<svg[\s>]"
    rb"|<iframe[\s>]|<object[\s>]|<embed[\s>]|<\?xml-stylesheet|<librarydescription|<searchconnectordescription"
    rb"|^mime-version:.*?^content-type:\s*multipart/related|<hta:application|<job[\s>]|<scriptlet[\s>]"
    rb"|^\s*\{\\rtf",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)
_PDF_ACTIONS = re.compile(rb"/(?:JavaScript|JS|Launch|RichMedia|EmbeddedFile|XFA)\b")
_PDF_NAME_ESCAPE = re.compile(rb"#([0-9A-Fa-f]{2})")
_ZIP_SIGNS = (
    ("vbaproject", "an office file with macros"),
    ("activex", "an office file with ActiveX controls"),
    ("basic/", "an OpenDocument file with macros"),
    ("scripts/", "an OpenDocument file with scripts"),
    ("meta-inf/manifest.mf", "a Java program"),
    ("androidmanifest.xml", "an Android program"),
    ("appxmanifest.xml", "a Windows app package"),
)


def _zip_sign(data: bytes) -> str:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = [info.filename.lower() for info in archive.infolist()]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError, NotImplementedError):
        return ""  # (an unreadable archive opens as nothing)
    for name in names:
        for sign, what in _ZIP_SIGNS:  # (a folder sign starts a name; any other is anywhere in one)
            if name.startswith(sign) if sign.endswith("/") else sign in name:
                return what
    return ""


def sniffed(data: bytes) -> str:
    """What the contents say they are when that can run code ("" otherwise), whatever the name says."""
    head = data[:SNIFFED].lstrip(b"\xef\xbb\xbf")  # (a UTF-8 byte-order mark hides nothing)
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    if head.startswith(b"%PDF-"):
        found = _PDF_ACTIONS.search(_PDF_NAME_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), data))
        return "a PDF that runs scripts or programs" if found else ""
    if head.startswith(b"PK\x03\x04"):
        return _zip_sign(data)
    if _TEXT_SIGNS.search(head) or _TEXT_SIGNS.search(head.replace(b"\x00", b"")):  # (UTF-16 text too)
        return "a launcher, script or web page"
    if data[0x8001:0x8006] == b"CD001" or data[-512:].startswith(b"koly"):
        return "a disk image"
    return ""


def risky(block: ContentBlock) -> str:
    """Why opening this attachment could run code ("" when nothing says so): its normalised name (``x.pdf.exe`` is a
    program, ``trusted.desktop.`` a launcher), the MIME type the mail gives it, then its contents."""
    extension = extension_of(block.filename)
    if extension in EXTENSIONS:
        return f"a .{extension} file can run code when opened ({EXTENSIONS[extension]})"
    mime = (block.mime_type or "").split(";")[0].strip().lower()
    if mime in RISKY_TYPES or any(part in mime for part in _RISKY_TYPE_PARTS):
        return f"a {clean_line(mime, limit=60)} file can run code when opened"
    what = sniffed(attachment_bytes(block))
    return f"its contents are {what}, which can run code when opened, whatever its name says" if what else ""
